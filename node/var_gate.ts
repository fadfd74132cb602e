/**
 * The supervisor's start gate on a node that installs to a disk: no service
 * starts before EPHEMERAL is mounted at /var. Otherwise containerd (root
 * /var/lib/containerd) and the payloads write into the initramfs's /var, in
 * RAM, and EPHEMERAL is then mounted over what they wrote: their state is
 * hidden from them, and lost at the next boot.
 */
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineStore,
  MOUNT_STATUS,
} from "../resources/mod.ts";

/**
 * A start gate (see `SupervisorDeps.startGate`) reading the store: open when
 * the config names no install disk, or once MountStatus EPHEMERAL is mounted.
 * It stays open after that (machined never unmounts /var while it runs), so a
 * later config change cannot hold restarts of running services. The reason
 * carries the mount's error when it failed. Call `Supervisor.recheck()` when
 * EPHEMERAL is mounted. With `tpmClosed`, it also waits for PCR 11 to be
 * closed to `tpm` keys (node/tpm_close.ts), so no service starts while they
 * could still unseal.
 */
export function varMountedGate(
  store: MachineStore,
  tpmClosed?: () => boolean,
): () => string | undefined {
  let opened = false;
  return () => {
    if (opened) return undefined;
    const config = store.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    if (!config?.machine.install) return undefined;
    const mount = store.find(MOUNT_STATUS, "block", "EPHEMERAL")?.spec;
    if (mount?.mounted && mount.phase === "ready") {
      if (tpmClosed && !tpmClosed()) return "waiting for PCR 11 to be closed to tpm keys";
      opened = true;
      return undefined;
    }
    const why = mount?.error?.message ?? "";
    return `waiting for EPHEMERAL to be mounted at ${mount?.target || "/var"}` +
      (why ? ` (${why})` : "");
  };
}
