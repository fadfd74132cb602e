/**
 * The upgrade service as a node runs it: the real ESP (found among the
 * discovered volumes by its GPT type; on a Pi 3 the boot FAT, which the GPT
 * lists with the same type) with the slot layout of the image's board, the trusted keys of the current
 * config, /proc/cmdline for the booted slot, and the bless watcher: once
 * MachineStatus says ready, a booted trial slot is blessed; a trial not
 * ready by `machine.upgrade.trial_deadline` is marked bad and the node
 * reboots into the other slot; and the kexec reboot (kexec_reboot.ts) over
 * the same ESP. The upgrade record (floor, last outcome) lives in
 * `upgrade.json` on STATE while STATE is mounted, and UpgradeStatus is
 * published once the ESP is discovered and again once STATE is mounted.
 * Built by boot/node_main.ts in one call.
 */
import {
  EXTENSIONS_INDEX,
  imageFacts,
  parseExtensionIndex,
  PARTITION_TYPE,
} from "../layout/mod.ts";
import type { FirmwareBackend } from "../platform/firmware/mod.ts";
import { enrolledDb } from "./uki_check.ts";
import { isStateMounted, MOUNT_STATUS, STATE_MOUNT_ID } from "../resources/mod.ts";
import type { MountBackend } from "../platform/mount/mod.ts";
import { type EspBackend, NativeEspBackend } from "../platform/esp/mod.ts";
import type { BootIdSource } from "../platform/identity/mod.ts";
import type { ActionRequester, RebootMode } from "../api/server/mod.ts";
import type { KmodBackend } from "../platform/kmod/mod.ts";
import { KexecReboot } from "./kexec_reboot.ts";
import type { Machined } from "../core/mod.ts";
import type { ConfigKeeper } from "../config/keeper/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { dirRecordStore } from "./upgrade_record.ts";
import { hostCompatible, UEFI_BOARD } from "../bundle/mod.ts";
import { EspBootCmdline } from "./booted_cmdline.ts";
import { bootedSlot } from "./entries.ts";

/** How often the bless watcher looks at MachineStatus. */
const READY_POLL_MS = 2000;
/**
 * How long a trial slot has, from machined's start, to become ready before
 * it is marked bad and the node reboots into the other slot, while no config
 * says otherwise (`machine.upgrade.trial_deadline`, whose default it is).
 * Generous: under TCG on a loaded host a healthy node took 3–4 min.
 */
export const TRIAL_READY_DEADLINE_MS = 15 * 60_000;

/**
 * The device of the ESP: the first discovered partition of the EFI System
 * type, in disk-name order (machined-init takes the first disk with one).
 */
export function espDevice(machined: Machined): string | undefined {
  return machined.store.list("DiscoveredVolume")
    .filter((v) => v.spec.partitionType === PARTITION_TYPE.EFI_SYSTEM && v.spec.inKernel)
    .sort((a, b) =>
      a.spec.disk.localeCompare(b.spec.disk) || a.spec.partitionNumber - b.spec.partitionNumber
    )[0]
    ?.spec.devicePath;
}

/**
 * The node's ESP, shared by the upgrade service and the kernel-cmdline controller so their
 * sessions queue on one mount.
 */
export function nodeEsp(machined: Machined, mount: MountBackend): EspBackend {
  return new NativeEspBackend(mount, () => espDevice(machined));
}

/**
 * Where machine.kernel.args go on a running node: the booted slot's loader entry on `esp`
 * (booted_cmdline.ts), the booted slot from /proc/cmdline, the board from the image.
 */
export function nodeBootCmdline(esp: EspBackend): EspBootCmdline {
  return new EspBootCmdline({
    esp,
    booted: async () => bootedSlot(await Deno.readTextFile("/proc/cmdline").catch(() => "")),
    board: () => imageFacts().then((f) => f.board || UEFI_BOARD),
  });
}

/** The node's upgrade service and its bless watcher. */
export function nodeUpgradeService(deps: {
  machined: Machined;
  mount: MountBackend;
  keeper: ConfigKeeper;
  bootId: BootIdSource;
  reboot: (by: ActionRequester) => void;
  kmod: KmodBackend;
  /** The fetch of `upgrade --from` (pki's trusted fetch on a node). @default globalThis.fetch */
  fetch?: typeof fetch;
  esp?: EspBackend;
  /** Where the Secure Boot db is read from (a UKI bundle is checked against it). */
  firmware: FirmwareBackend;
}): {
  upgrade: NodeUpgrade;
  /** How the node's next reboot boots; the shutdown sequence ends in it (boot/shutdown.ts). */
  kexec: KexecReboot;
  /**
   * Bless a booted trial once ready; mark it bad past `deadlineMs` on
   * machined's clock (default: the config's `machine.upgrade.trial_deadline`,
   * read on each look, so a config that arrives late still counts).
   */
  watchAndBless(signal?: AbortSignal, deadlineMs?: number): Promise<void>;
} {
  const { machined } = deps;
  const esp = deps.esp ?? new NativeEspBackend(deps.mount, () => espDevice(machined));
  const { events, logger } = machined;
  const kexec = new KexecReboot({ esp, kmod: deps.kmod, events, logger });
  const upgrade = new NodeUpgrade({
    esp,
    events: machined.events,
    logger: machined.logger,
    cmdline: () => Deno.readTextFile("/proc/cmdline"),
    trustedKeys: () => deps.keeper.config?.machine.upgrade.trusted_keys ?? [],
    kernelArgs: () => deps.keeper.config?.machine.kernel.args,
    trialTries: () => deps.keeper.config?.machine.upgrade.boot_tries,
    bootId: () => deps.bootId.bootId(),
    reboot: (by: ActionRequester, mode?: RebootMode) => {
      kexec.request(mode);
      deps.reboot(by);
    },
    record: dirRecordStore(() => stateDir(machined)),
    imageVersion: () => imageFacts().then((f) => f.imageVersion || undefined),
    runningExtensions: () =>
      Deno.readTextFile(EXTENSIONS_INDEX).then(
        (t) => parseExtensionIndex(t).map((e) => e.name),
        (e) => e instanceof Deno.errors.NotFound ? [] : Promise.reject(e),
      ),
    // The image's board picks the slot layout; an image from before `board=` is a UEFI PC.
    machine: () =>
      imageFacts().then((f) => ({ ...hostCompatible(), board: f.board || UEFI_BOARD })),
    store: machined.store,
    secureBootDb: () => enrolledDb(deps.firmware),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  return {
    upgrade,
    kexec,
    async watchAndBless(signal, fixedDeadlineMs) {
      if (!(await upgrade.booted())) return; // not booted from a slot (dev mode)
      void followStatus(machined, upgrade, signal);
      while (!signal?.aborted) {
        const deadlineMs = fixedDeadlineMs ?? trialDeadlineMs(deps.keeper);
        if (performance.now() > deadlineMs) {
          const reason = `not ready ${deadlineMs / 60_000} min after machined started`;
          await upgrade.failTrial(reason).catch((e) =>
            machined.logger.error("upgrade", "cannot mark the booted trial bad", {
              error: String(e),
            })
          );
          return;
        }
        // Ready, and the ESP discovered (MachineStatus can be ready before disk discovery ran).
        if (machined.store.list("MachineStatus")[0]?.spec.ready && espDevice(machined)) {
          const done = await upgrade.bless().then(() => true, (e) => {
            machined.logger.error("upgrade", "cannot bless the booted slot (retrying in 30 s)", {
              error: String(e),
            });
            return false;
          });
          if (done) return;
          await new Promise((r) => setTimeout(r, 30_000));
        }
        await new Promise((r) => setTimeout(r, READY_POLL_MS));
      }
    },
  };
}

/** The trial deadline the current config sets, or the default before there is one. */
export function trialDeadlineMs(keeper: Pick<ConfigKeeper, "config">): number {
  return keeper.config?.machine.upgrade.trial_deadline ?? TRIAL_READY_DEADLINE_MS;
}

/** Where STATE is mounted, while it is. */
export function stateDir(machined: Pick<Machined, "store">): string | undefined {
  const m = machined.store.find(MOUNT_STATUS, "block", STATE_MOUNT_ID)?.spec;
  return isStateMounted(m) ? m!.target : undefined;
}

/**
 * Publish UpgradeStatus once the ESP is discovered, and again once STATE is
 * mounted (its record may hold a higher floor and the last outcome). Gives
 * up waiting for STATE after {@link TRIAL_READY_DEADLINE_MS} (a node without one).
 */
async function followStatus(
  machined: Machined,
  upgrade: NodeUpgrade,
  signal?: AbortSignal,
): Promise<void> {
  let published = false;
  while (!signal?.aborted) {
    const due = !published || (!upgrade.book.loaded && stateDir(machined) !== undefined);
    let failed = false;
    if (due && espDevice(machined)) {
      const ok = await upgrade.refreshStatus(); // logs why not
      published ||= ok;
      failed = !ok;
    }
    if (published && (upgrade.book.loaded || performance.now() > TRIAL_READY_DEADLINE_MS)) return;
    await new Promise((r) => setTimeout(r, failed ? 30_000 : READY_POLL_MS));
  }
}
