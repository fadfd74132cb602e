/**
 * Install to disk, the sequence: whenever the config in force names
 * `machine.install` with `system: true`, decide (decide_install.ts) on facts
 * read now; on `install`, write the system (install_system.ts), then wait
 * until the provisioner has appended STATE and EPHEMERAL to it (it waits for
 * this ESP, controllers/block/decide_provisioning.ts) and the config is
 * persisted on STATE, and reboot through the Reboot RPC's path. Each install
 * request is handled once per boot; a failure is reported (log and event
 * `install <disk>` failed), never thrown: PID 1 keeps running from the boot
 * medium.
 * @module
 */
import { MACHINE_CONFIG, MACHINE_CONFIG_ID, VOLUME_STATUS } from "../resources/mod.ts";
import type { BlockBackend } from "../platform/block/mod.ts";
import type { MountBackend } from "../platform/mount/mod.ts";
import { gatherDiskFacts, resolveDevice } from "../controllers/block/mod.ts";
import { DEFAULT_LAYOUT } from "../layout/mod.ts";
import type { Machined } from "../core/mod.ts";
import { type BootMedium, decideInstall, type InstallDecision } from "./decide_install.ts";
import { findBootMedium } from "./boot_medium.ts";
import { type InstallReport, installSystem } from "./install_system.ts";

/** What {@link startInstall} needs. */
export interface InstallDeps {
  machined: Machined;
  block: BlockBackend;
  mount: MountBackend;
  /** Reboot the node (the Reboot RPC's path). */
  reboot: () => void;
  /** Whether the config in force is persisted on STATE (so the installed disk boots with it). */
  persisted: () => Promise<boolean>;
  /** @default "/run/machined/install" */
  workDir?: string;
  /** @default findBootMedium over `mount` and `block` */
  findBoot?: () => Promise<BootMedium | undefined>;
  /** How long to wait for STATE, EPHEMERAL and the persisted config. @default 5 min */
  readyTimeoutMs?: number;
  signal?: AbortSignal;
}

/** What one handled install request came to. */
export interface InstallOutcome {
  decision: InstallDecision;
  report?: InstallReport;
  rebooted: boolean;
}

/**
 * Watches the config and runs the install when one asks for it; resolves
 * when `signal` aborts. `onOutcome` sees each handled request (tests).
 */
export async function startInstall(
  deps: InstallDeps,
  onOutcome?: (o: InstallOutcome) => void,
): Promise<void> {
  const { machined } = deps;
  let handled = "";
  const check = async () => {
    const install = machined.store.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config
      .machine.install;
    const key = install?.system ? JSON.stringify(install) : "";
    if (key === handled) return;
    handled = key;
    if (!install?.system) return;
    const outcome = await runInstall(deps, { ...install, system: true }).catch((e) => {
      machined.logger.error("install", `install to ${install.disk} failed`, { error: e });
      machined.events.emit("task", `install ${install.disk}`, "failed", String(e?.message ?? e));
      return undefined;
    });
    if (outcome) onOutcome?.(outcome);
  };
  await check();
  try {
    for await (const _ of machined.store.watch(MACHINE_CONFIG, { signal: deps.signal })) {
      await check();
    }
  } catch (e) {
    if (!deps.signal?.aborted) throw e;
  }
}

async function runInstall(
  deps: InstallDeps,
  install: { disk: string; wipe: boolean; system: boolean },
): Promise<InstallOutcome> {
  const { machined } = deps;
  const subject = `install ${install.disk}`;
  const path = await resolveDevice(install.disk);
  const mountedSources = new Set((await deps.mount.mounts()).map((m) => m.source));
  const target = await gatherDiskFacts(deps.block, path, {
    mountedSources,
    zeroBytes: DEFAULT_LAYOUT.zeroBytes,
  }).catch(() => undefined);
  const boot = await (deps.findBoot ?? (() => findBootMedium(deps.mount, deps.block)))();
  const decision = decideInstall({
    install,
    target,
    boot,
    minFree: DEFAULT_LAYOUT.stateSize + DEFAULT_LAYOUT.minEphemeralSize,
  });
  const log = decision.action === "refuse" ? "warn" : "info";
  machined.logger[log]("install", decision.reason, { action: decision.action });
  machined.events.emit("task", subject, decision.action, decision.reason);
  if (decision.action !== "install") return { decision, rebooted: false };

  const report = await installSystem(
    { block: deps.block, mount: deps.mount, workDir: deps.workDir ?? "/run/machined/install" },
    boot!,
    path,
    decision,
  );
  const summary = `copied ${report.copiedBytes} bytes from ${boot!.disk} ` +
    `(${report.unchangedZeroBytes} zero bytes already zero) in ` +
    `${report.copyS.toFixed(1)} s; ${report.files.length} files verified in ` +
    `${report.verifyS.toFixed(1)} s`;
  machined.logger.info("install", `system written to ${path}: ${summary}`, {
    files: report.files.map((f) => `${f.path} ${f.sha256.slice(0, 12)} (${f.checkedAgainst})`),
  });
  machined.events.emit("task", subject, "written", summary);
  await waitUntilReady(deps, path);
  machined.events.emit("task", subject, "rebooting", `booting from ${path}`);
  deps.reboot();
  return { decision, report, rebooted: true };
}

/** Both volumes ready on `disk` and the config persisted on STATE. */
async function waitUntilReady(deps: InstallDeps, disk: string): Promise<void> {
  const deadline = performance.now() + (deps.readyTimeoutMs ?? 300_000);
  for (;;) {
    const volumes = deps.machined.store.list(VOLUME_STATUS).map((r) => r.spec);
    const ready = ["STATE", "EPHEMERAL"].every((id) =>
      volumes.some((v) => v.volume === id && v.phase === "ready" && v.disk === disk)
    );
    if (ready && await deps.persisted()) return;
    if (performance.now() > deadline) {
      throw new Error(`STATE and EPHEMERAL on ${disk} were not ready with the config persisted`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
