/**
 * The config sources that need devices or the network (config/keeper/config_sources.ts
 * items 5 and 6), tried after machined has started and only while no config
 * is in force: a `CIDATA` volume's `user-data`, then the command line's URL
 * (retried until it answers, or until a config arrives another way, e.g.
 * `apply-config --insecure`). What they find goes through the config keeper
 * like any config (validated, persisted on STATE, errors with line:column).
 *
 * @module
 */
import { join } from "node:path";
import { ADDRESS_STATUS, DISCOVERED_VOLUME } from "../../resources/mod.ts";
import type { MountBackend } from "../../platform/mount/mod.ts";
import { fetchConfig } from "./config_fetch.ts";
import type { LateConfigPlan } from "./config_sources.ts";
import type { ConfigKeeper } from "./config_keeper.ts";
import type { Machined } from "../../core/mod.ts";

/** Options of {@link runLateConfig}. */
export interface LateConfigOptions {
  readonly machined: Machined;
  readonly keeper: ConfigKeeper;
  readonly plan: LateConfigPlan;
  readonly mount?: MountBackend;
  /** Where a CIDATA volume is mounted read-only for a moment. */
  readonly cidataDir: string;
  /** Where a STATE found without a config is mounted read-only for a moment. @default `${cidataDir}-state` */
  readonly stateDir?: string;
  /**
   * How long to wait for disks to show a STATE or CIDATA volume, counted from the moment
   * discovery has published its first volume. @default 10 s
   */
  readonly cidataWaitMs?: number;
  /**
   * Resolves once disk discovery's first full scan has published every disk the kernel
   * listed and their volumes. STATE lives on the system disk, present at that scan, so it
   * is then found or absent: a fresh node's first boot and every boot after a reset no
   * longer wait out `cidataWaitMs` for it. CIDATA keeps the whole window (a USB stick may
   * enumerate after the scan).
   */
  readonly disksScanned?: Promise<void>;
  /** How long to wait for discovery to publish any volume at all. @default 2 min */
  readonly discoveryWaitMs?: number;
  /** Resolves when the node has a non-loopback address. @default watches AddressStatus */
  readonly networkUp?: (signal: AbortSignal) => Promise<void>;
  readonly fetch?: typeof fetch;
  readonly signal?: AbortSignal;
  /** Called once STATE has been looked for (found or not): the maintenance gate waits for it. */
  readonly onStateChecked?: () => void;
  /** Opens a STATE holding LUKS2 (controllers/block's StateBootOpener); without it one is skipped. */
  readonly encryptedState?: EncryptedStateOpener;
}

/** The filesystem type blkid gives a LUKS header. */
export const LUKS_FILESYSTEM = "crypto_LUKS";

/** A STATE opened for reading (its mapping); closed once `config.yaml` is read. */
export interface ReadableState {
  readonly devicePath: string;
  readonly filesystem: string;
  /** How it was opened, for the log line. */
  readonly by: string;
  close(): Promise<void>;
}

/**
 * Opens an encrypted STATE before any config: by its header's tokens, or by
 * waiting (while the node says `locked`, after `onLocked`) for a passphrase
 * through UnlockVolume; undefined when `signal` aborts.
 */
export interface EncryptedStateOpener {
  open(
    device: string,
    signal: AbortSignal,
    onLocked: () => void,
  ): Promise<ReadableState | undefined>;
}

/** Tries the late sources in order; resolves with where the config came from, if anywhere. */
export async function runLateConfig(o: LateConfigOptions): Promise<string | undefined> {
  const { machined, keeper } = o;
  if (o.plan.refused) {
    machined.logger.warn("config", o.plan.refused);
    machined.events.emit("config", "source", "refused", o.plan.refused);
  }
  const abort = new AbortController();
  const stop = () => abort.abort();
  o.signal?.addEventListener("abort", stop, { once: true });
  const unsubscribe = keeper.onChange(() => keeper.config && stop()); // a config arrived
  const waits = { afterFirstMs: o.cidataWaitMs ?? 10_000, maxMs: o.discoveryWaitMs ?? 120_000 };
  let scanned = false;
  o.disksScanned?.then(() => scanned = true);
  const stateWaits = { ...waits, settled: () => scanned };
  try {
    for (const source of o.plan.sources) {
      if (source.kind !== "state") o.onStateChecked?.();
      if (keeper.config || abort.signal.aborted) return undefined;
      let text: string | undefined;
      let from: string;
      if (source.kind === "state") {
        const dev = await findVolume(machined, stateWaits, abort.signal, isState);
        if (!dev || !o.mount) continue;
        from = `STATE ${dev.devicePath}`;
        const state = await readableState(o, dev, abort.signal);
        if (!state) continue;
        text = await readFileOn(o.mount, state, o.stateDir ?? `${o.cidataDir}-state`, source.file)
          .catch((e) => {
            if (!(e instanceof Deno.errors.NotFound)) {
              machined.logger.warn("config", `cannot read ${source.file} from ${from}`, {
                error: e,
              });
            }
            return undefined;
          })
          .finally(() =>
            state.close().catch((e) => {
              machined.logger.warn("config", `cannot close ${state.devicePath}`, { error: e });
            })
          );
      } else if (source.kind === "cidata") {
        const dev = await findVolume(machined, waits, abort.signal, isCidata);
        if (!dev || !o.mount) continue;
        from = `${source.label} volume ${dev.devicePath}`;
        text = await readFileOn(o.mount, dev, o.cidataDir, source.file).catch((e) => {
          machined.logger.warn("config", `cannot read ${source.file} from ${from}`, { error: e });
          return undefined;
        });
      } else {
        from = source.url;
        await (o.networkUp ?? ((s) => networkUp(machined, s)))(abort.signal);
        text = await fetchConfig(source.url, {
          sha256: source.sha256,
          fetch: o.fetch,
          signal: abort.signal,
          onError: (e, attempt) =>
            machined.logger.warn("config", e.message, { attempt, retrying: true }),
        }).catch((e) => {
          if (!abort.signal.aborted) throw e;
          return undefined;
        });
      }
      if (text === undefined || keeper.config) continue;
      const loaded = await keeper.apply(text, from);
      machined.logger.info("config", `config from ${from}: ${loaded.state}`);
      if (loaded.state === "valid") return from;
    }
    return undefined;
  } finally {
    o.onStateChecked?.();
    unsubscribe();
    o.signal?.removeEventListener("abort", stop);
  }
}

/**
 * STATE as a device to mount read-only: the partition itself, or for a LUKS2
 * header its mapping once {@link LateConfigOptions.encryptedState} opened it
 * (which may wait for UnlockVolume). Undefined: nothing to read.
 */
async function readableState(
  o: LateConfigOptions,
  dev: Volume,
  signal: AbortSignal,
): Promise<ReadableState | undefined> {
  if (dev.filesystem !== LUKS_FILESYSTEM) {
    const plain = { devicePath: dev.devicePath, filesystem: dev.filesystem || "ext4" };
    return { ...plain, by: "plain", close: () => Promise.resolve() };
  }
  const log = o.machined.logger;
  if (!o.encryptedState) {
    log.warn("config", `STATE ${dev.devicePath} is LUKS2 and this node cannot open it`);
    return undefined;
  }
  try {
    const opened = await o.encryptedState.open(dev.devicePath, signal, () => o.onStateChecked?.());
    if (opened) log.info("config", `STATE ${dev.devicePath} opened by ${opened.by}`);
    return opened;
  } catch (e) {
    log.warn("config", `cannot open STATE ${dev.devicePath}`, { error: e });
    return undefined;
  }
}

/**
 * Options every FAT mount needs on the image's kernel: its default iocharset
 * is `ascii`, whose NLS module the image does not ship, so a bare vfat mount
 * fails with EINVAL (found by e2e/node_install_test.ts's CIDATA drive).
 * machined-init mounts the ESP with the same options.
 */
export const VFAT_MOUNT_OPTIONS = "codepage=437,iocharset=utf8";

type Volume = { devicePath: string; filesystem: string; filesystemLabel: string; role: string };
const isCidata = (v: Volume) =>
  v.filesystemLabel.toUpperCase() === "CIDATA" &&
  (v.filesystem === "vfat" || v.filesystem === "iso9660");
const isState = (v: Volume) => v.role === "state";

/**
 * Waits for a volume matching `pred`. The window starts when discovery has
 * published its first volume, not at the call: under TCG on a loaded host the
 * first scan came 20-30 s after machined started, and a fixed 10 s from the
 * call missed STATE on an installed disk and took the CIDATA drive's config
 * instead (e2e/node_install_test.ts). At most `maxMs` for discovery itself.
 * `settled` ends the wait early: discovery's first full scan is in the store.
 */
async function findVolume(
  m: Machined,
  waits: { afterFirstMs: number; maxMs: number; settled?: () => boolean },
  signal: AbortSignal,
  pred: (v: Volume) => boolean,
) {
  const start = performance.now();
  let firstSeen: number | undefined;
  while (!signal.aborted) {
    const all = m.store.list(DISCOVERED_VOLUME).map((r) => r.spec);
    const found = all.find(pred);
    if (found) return found;
    if (waits.settled?.()) return undefined; // discovery saw every disk: it is on none
    const now = performance.now();
    if (all.length > 0) firstSeen ??= now;
    if (
      firstSeen !== undefined ? now - firstSeen >= waits.afterFirstMs : now - start >= waits.maxMs
    ) {
      return undefined;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

async function readFileOn(
  mount: MountBackend,
  vol: { devicePath: string; filesystem: string },
  dir: string,
  file: string,
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await mount.mount({
    source: vol.devicePath,
    target: dir,
    fstype: vol.filesystem,
    flags: ["ro"],
    ...(vol.filesystem === "vfat" ? { data: VFAT_MOUNT_OPTIONS } : {}),
  });
  try {
    return await Deno.readTextFile(join(dir, file));
  } finally {
    await mount.unmount(dir, { detach: true }).catch(() => {});
  }
}

async function networkUp(m: Machined, signal: AbortSignal): Promise<void> {
  const up = () =>
    m.store.list(ADDRESS_STATUS).some((r) =>
      r.spec.scope === "global" && !r.spec.address.startsWith("127.")
    );
  if (up()) return;
  for await (const _ of m.store.watch(ADDRESS_STATUS, { signal })) {
    if (up()) return;
  }
}
