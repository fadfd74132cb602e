/**
 * Install to disk (`machine.install.system`, docs/install.md): booted from
 * one disk (the "USB stick"), the node writes the system onto the install
 * disk (a GPT and the boot medium's ESP, every copied file checked), lets the
 * provisioner add STATE and EPHEMERAL there, persists its config on that
 * STATE and reboots from it. The boot medium is only read. The decision is
 * the pure {@link decideInstall}; the writes are {@link installSystem}; the
 * sequence is {@link startInstall}.
 * @module
 */
import { join } from "node:path";
import type { BlockBackend } from "../platform/block/mod.ts";
import type { MountBackend } from "../platform/mount/mod.ts";
import { MOUNT_POINT } from "../layout/mod.ts";
import type { ConfigKeeper } from "../config/keeper/mod.ts";
import type { Machined } from "../core/mod.ts";
import { startInstall } from "./install_coordinator.ts";

export {
  type BootMedium,
  decideInstall,
  type InstallDecision,
  type InstallInputs,
  type InstallRefuseCode,
  type InstallTarget,
} from "./decide_install.ts";
export { bootDiskOf, findBootMedium } from "./boot_medium.ts";
export {
  type InstalledFile,
  type InstallReport,
  installSystem,
  InstallVerifyError,
  sha256File,
} from "./install_system.ts";
export { type InstallDeps, type InstallOutcome, startInstall } from "./install_coordinator.ts";

/**
 * boot/node_main.ts's one call: runs {@link startInstall} in the background
 * with the node's backends; a failure is logged, never thrown (PID 1 keeps
 * running from the boot medium).
 */
export function startInstallToDisk(
  node: { machined: Machined; keeper: ConfigKeeper },
  backends: { block: BlockBackend; mount: MountBackend },
  reboot: () => void,
): void {
  const persisted = async () =>
    node.keeper.canPersist &&
    await Deno.stat(join(MOUNT_POINT.STATE, "config.yaml")).then(() => true, () => false);
  startInstall({ machined: node.machined, ...backends, reboot, persisted }).catch((e) =>
    node.machined.logger.error("install", "install to disk stopped", { error: e })
  );
}
