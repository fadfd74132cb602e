/**
 * The node's upgrade service behind the Upgrade and Rollback RPCs: one
 * operation at a time; progress and outcomes on the event bus (kind
 * `upgrade`) and in the log; the trusted keys read from the current config
 * at each call; refusals as the API's typed errors (refusal.ts). After an
 * upgrade or rollback that is not staged it asks for a reboot. It keeps the
 * upgrade record (the downgrade floor and the last outcome, on STATE:
 * upgrade_record.ts) and, given a store, the UpgradeStatus resource
 * (upgrade_status.ts) up to date after each operation.
 */
import type {
  ActionRequester,
  RebootMode,
  RollbackAnswer,
  UpgradeAnswer,
} from "../api/server/mod.ts";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";
import type { EspBackend } from "../platform/esp/mod.ts";
import type { MachineStore } from "../resources/mod.ts";
import { bootedSlot, type Slot } from "./entries.ts";
import { type Compatible, hostCompatible } from "../bundle/mod.ts";
import { toRefusal } from "./refusal.ts";
import { fetchBundle } from "./fetch_bundle.ts";
import { loadTrustedKey, type TrustedKey } from "../bundle/mod.ts";
import { installBundle } from "./slot_writer.ts";
import { checkSlotUki } from "./uki_check.ts";
import type { DbCertificate } from "../bundle/authenticode/mod.ts";
import { type SlotLayout, slotLayoutFor } from "./slot_layout.ts";
import { memoryRecordStore, type RecordStore, UpgradeBook } from "./upgrade_record.ts";
import { UpgradeStatusPublisher } from "./upgrade_status.ts";
import { raiseEspFloor, readEspFloor } from "./esp_floor.ts";
import { recordedFloor } from "./version_floor.ts";
import type { KernelArgs } from "../config/mod.ts";

/** What {@link NodeUpgrade} needs. */
export interface NodeUpgradeDeps {
  esp: EspBackend;
  events: Pick<EventBus, "emit">;
  logger: Logger;
  /** The kernel command line (/proc/cmdline). */
  cmdline: () => Promise<string>;
  /** machine.upgrade.trusted_keys of the current config. */
  trustedKeys: () => readonly string[];
  bootId: () => Promise<string>;
  /** Start the reboot (after the RPC has answered); an upgrade's is `kexec` unless asked otherwise. */
  reboot: (by: ActionRequester, mode?: RebootMode) => void;
  /**
   * What this machine is; its board picks the slot layout (slot_layout.ts).
   * @default hostCompatible() (a UEFI PC of this architecture)
   */
  machine?: Compatible | (() => Promise<Compatible>);
  /** Where the floor and the last outcome are kept. @default in memory only */
  record?: RecordStore;
  /** The store UpgradeStatus is published in. @default none published */
  store?: MachineStore;
  /** The running image's version (release record), for entries that name none. */
  imageVersion?: () => Promise<string | undefined>;
  /**
   * The booted slot's system extensions (names in its root image's index),
   * read at each install: a bundle that drops one is refused unless forced.
   * @default none
   */
  runningExtensions?: () => Promise<readonly string[]>;
  /** machine.kernel.args of the current config, read at each install. @default none */
  kernelArgs?: () => KernelArgs | undefined;
  /** `machine.upgrade.boot_tries`, read at each install. @default TRIAL_TRIES */
  trialTries?: () => number | undefined;
  /**
   * The enrolled Secure Boot db's certificates, which a UKI bundle's UKIs must
   * verify against before a byte is written (upgrade/uki_check.ts).
   * @default none: every UKI bundle is refused
   */
  secureBootDb?: () => Promise<DbCertificate[]>;
  /**
   * The fetch of `upgrade --from`: on a node, pki's trusted fetch over the CA bundle, so a root
   * added by config is trusted without a restart. @default globalThis.fetch
   */
  fetch?: typeof fetch;
}

/** See the module doc. */
export class NodeUpgrade {
  #busy = false;
  /** The version of the bundle under way, once its manifest verified. */
  #version = "";
  /** The floor and the last outcome. */
  readonly book: UpgradeBook;
  #status?: UpgradeStatusPublisher;
  #platform?: Promise<{ machine: Compatible; layout: SlotLayout }>;

  #secureBootDb(): Promise<DbCertificate[]> {
    return this.deps.secureBootDb?.() ?? Promise.resolve([]);
  }

  constructor(private readonly deps: NodeUpgradeDeps) {
    this.book = new UpgradeBook(
      deps.record ?? memoryRecordStore(),
      (what, e) => deps.logger.error("upgrade", what, { error: String(e) }),
    );
    if (deps.store) {
      this.#status = new UpgradeStatusPublisher({
        store: deps.store,
        esp: deps.esp,
        book: this.book,
        booted: () => this.booted(),
        readEntries: async (booted) => (await this.platform()).layout.entries(deps.esp, booted),
        imageVersion: deps.imageVersion,
      });
    }
  }

  /**
   * Re-read the ESP and the record and publish UpgradeStatus; false (logged)
   * when the ESP cannot be read. Never throws.
   */
  async refreshStatus(): Promise<boolean> {
    if (!this.#status) return false;
    try {
      await this.#status.refresh();
      return true;
    } catch (e) {
      this.deps.logger.warn("upgrade", "cannot publish UpgradeStatus", { error: String(e) });
      return false;
    }
  }

  /** What this machine is and its slot layout, read once. */
  platform(): Promise<{ machine: Compatible; layout: SlotLayout }> {
    this.#platform ??= (async () => {
      const m = this.deps.machine;
      const machine = typeof m === "function" ? await m() : m ?? hostCompatible();
      return { machine, layout: slotLayoutFor(machine.board) };
    })();
    return this.#platform;
  }

  /** The booted slot, from `machined.slot=`; undefined outside an image. */
  async booted(): Promise<Slot | undefined> {
    return bootedSlot(await this.deps.cmdline().catch(() => ""));
  }

  /**
   * Install a bundle (streamed, or fetched from `fromUrl`) into the other
   * slot and arm it; reboot unless staged.
   * @throws UpgradeRefusedError for every refusal (nothing armed).
   */
  upgrade(
    bundle: AsyncIterable<Uint8Array>,
    options: { stage: boolean; fromUrl?: string; force?: boolean; rebootMode?: RebootMode },
    by: ActionRequester,
  ): Promise<UpgradeAnswer> {
    return this.#exclusive("upgrade", by, async () => {
      const { events } = this.deps;
      const fetched = options.fromUrl
        ? await fetchBundle(options.fromUrl, this.deps.fetch)
        : undefined;
      if (fetched) bundle = fetched.body;
      let bytes = 0;
      let kid = "";
      await this.book.sync();
      const recorded = recordedFloor(await readEspFloor(this.deps.esp), this.book.floor);
      const { machine, layout } = await this.platform();
      /** The enrolled db, read once per install (both UKIs are checked against it). */
      let db: Promise<DbCertificate[]> | undefined;
      const r = await installBundle(bundle, {
        expectedSize: fetched?.size,
        esp: this.deps.esp,
        booted: await this.booted(),
        keys: await this.#keys(),
        machine,
        planner: layout.planner,
        kernelArgs: this.deps.kernelArgs?.(),
        trialTries: this.deps.trialTries?.(),
        force: options.force,
        floor: recorded.floor,
        floorSource: recorded.source === "esp" ? "esp" : "state",
        running: await this.deps.imageVersion?.().catch(() => undefined),
        runningExtensions: await this.deps.runningExtensions?.(),
        onManifest: (m) => (this.#version = m.version),
        checkHeld: async (name, bytes, m) =>
          checkSlotUki(name, bytes, { manifest: m, db: await (db ??= this.#secureBootDb()) }),
        onEvent: (e) => {
          if (e.phase === "received") bytes = e.bytes;
          if (e.phase === "verified") kid = e.kid;
          const fields = Object.fromEntries(Object.entries(e).map(([k, v]) => [k, String(v)]));
          events.emit("upgrade", "bundle", e.phase, `upgrade: ${describe(e)}`, fields);
        },
      }).finally(() => fetched?.abort());
      this.deps.logger.info("upgrade", `armed ${r.manifest.version} in slot ${r.plan.target}`, {
        by: by.name,
        role: by.role,
        entry: r.plan.armedAs,
        key: kid,
        stage: options.stage,
        forced: options.force === true,
      });
      this.#logForced(r, by);
      await this.book.note({
        outcome: "armed",
        version: r.manifest.version,
        slot: r.plan.target,
        reason: r.floor.kind === "forced" ? r.floor.message : options.stage ? "staged" : "",
      });
      await this.refreshStatus();
      const bootId = await this.deps.bootId().catch(() => "");
      const mode = options.rebootMode === "powercycle" || !layout.kexec ? "powercycle" : "kexec";
      if (!options.stage) setTimeout(() => this.deps.reboot(by, mode), 100);
      return {
        version: r.manifest.version,
        slot: r.plan.target,
        entry: r.plan.armedAs,
        bytes,
        rebooting: !options.stage,
        bootId,
        keyId: kid,
      };
    });
  }

  /** The warnings of a forced install: a downgrade, a dropped system extension. */
  #logForced(r: Awaited<ReturnType<typeof installBundle>>, by: ActionRequester): void {
    const who = { by: by.name, role: by.role, version: r.manifest.version };
    if (r.floor.kind === "forced") {
      this.deps.logger.warn("upgrade", `downgrade forced by ${by.name}: ${r.floor.message}`, {
        ...who,
        floor: r.floor.floor,
      });
    }
    if (r.extensions.kind === "forced") {
      this.deps.logger.warn(
        "upgrade",
        `extension drop forced by ${by.name}: ${r.extensions.message}`,
        { ...who, dropped: r.extensions.dropped.join(",") },
      );
    }
  }

  /**
   * Make the other slot boot next; reboot unless staged.
   * @throws UpgradeRefusedError when it is empty or not blessed.
   */
  rollback(options: { stage: boolean }, by: ActionRequester): Promise<RollbackAnswer> {
    return this.#exclusive("rollback", by, async () => {
      const { layout } = await this.platform();
      const slot = await layout.rollback(this.deps.esp, await this.booted());
      this.deps.events.emit(
        "upgrade",
        `slot ${slot}`,
        "rolled-back",
        `rollback: slot ${slot} boots next`,
      );
      this.deps.logger.info("upgrade", `rollback: slot ${slot} boots next`, { by: by.name });
      await this.book.note({
        outcome: "rolled-back",
        version: await this.#slotVersion(slot),
        slot,
        reason: `rollback by ${by.name}`,
      });
      await this.refreshStatus();
      const bootId = await this.deps.bootId().catch(() => "");
      if (!options.stage) setTimeout(() => this.deps.reboot(by), 100);
      return { slot, rebooting: !options.stage, bootId };
    });
  }

  /** Bless the booted slot if it is a trial (after a healthy boot). */
  async bless(): Promise<boolean> {
    const booted = await this.booted();
    if (!booted) return false;
    const done = await (await this.platform()).layout.bless(this.deps.esp, booted);
    if (done) {
      this.deps.events.emit("upgrade", `slot ${booted}`, "blessed", `slot ${booted} blessed`);
      this.deps.logger.info("upgrade", `slot ${booted} blessed after a healthy boot`);
      // The booted image's own version when the layout records none (the Pi's FAT, imaged entries).
      const version = (await this.#slotVersion(booted)) ||
        ((await this.deps.imageVersion?.().catch(() => undefined)) ?? "");
      await this.book.raise(version || undefined);
      await this.#raiseEspFloor(version);
      await this.book.note({ outcome: "upgraded", version, slot: booted, reason: "" });
      await this.refreshStatus();
    }
    return done;
  }

  /**
   * The booted trial did not become ready in time: mark it bad and reboot
   * into the other slot. False (and nothing done) when the booted slot is
   * not a trial.
   */
  async failTrial(reason: string): Promise<boolean> {
    const booted = await this.booted();
    if (!booted) return false;
    if (!(await (await this.platform()).layout.markBad(this.deps.esp, booted))) return false;
    const message = `slot ${booted} marked bad: ${reason}; rebooting into the other slot`;
    this.deps.events.emit("upgrade", `slot ${booted}`, "rolled-back", message, { reason });
    this.deps.logger.warn("upgrade", message);
    await this.book.note({
      outcome: "rolled-back",
      version: await this.#slotVersion(booted),
      slot: booted,
      reason: `slot ${booted} marked bad: ${reason}`,
    });
    await this.refreshStatus();
    setTimeout(() => this.deps.reboot({ name: "machined", role: "" }), 100);
    return true;
  }

  /**
   * Raise the floor on the ESP (esp_floor.ts) to the blessed version, or to
   * STATE's floor when that is higher (a node upgraded from a version that
   * kept it on STATE only); never lowers it. A failure is logged: the bless
   * stands and STATE still holds the floor.
   */
  async #raiseEspFloor(blessed: string): Promise<void> {
    try {
      const raised = await raiseEspFloor(this.deps.esp, [blessed || undefined, this.book.floor]);
      if (raised) {
        this.deps.logger.info("upgrade", `downgrade floor raised to ${raised} on the ESP`);
      }
    } catch (e) {
      this.deps.logger.error("upgrade", "cannot raise the downgrade floor on the ESP", {
        error: String(e),
      });
    }
  }

  /** The image version slot's entry names; "" when unknown. */
  async #slotVersion(slot: Slot): Promise<string> {
    const { layout } = await this.platform();
    const entries = await layout.entries(this.deps.esp, await this.booted()).catch(() => []);
    return entries.find((e) => e.name.slot === slot)?.version ?? this.book.ran[slot] ?? "";
  }

  async #keys(): Promise<TrustedKey[]> {
    const pems = this.deps.trustedKeys();
    return await Promise.all(
      pems.map((p, i) => loadTrustedKey(p, `machine.upgrade.trusted_keys[${i}]`)),
    );
  }

  async #exclusive<T>(what: string, by: ActionRequester, fn: () => Promise<T>): Promise<T> {
    if (this.#busy) {
      throw new UpgradeRefusedError("failed-precondition", "an upgrade or rollback is under way");
    }
    this.#busy = true;
    this.#version = "";
    try {
      return await fn();
    } catch (e) {
      const refusal = toRefusal(e);
      const message = (refusal ?? e as Error).message;
      this.deps.events.emit("upgrade", what, "refused", `${what} refused: ${message}`);
      this.deps.logger.warn("upgrade", `${what} refused`, { error: message, by: by.name });
      this.book.refused(this.#version, `${what} refused: ${message}`);
      await this.refreshStatus();
      throw refusal ?? e;
    } finally {
      this.#busy = false;
    }
  }
}

function describe(
  e: Parameters<NonNullable<Parameters<typeof installBundle>[1]["onEvent"]>>[0],
): string {
  switch (e.phase) {
    case "received":
      return `received ${e.bytes} of ${e.total} bytes`;
    case "verified":
      return `bundle ${e.version} verified (key ${e.kid})`;
    case "written":
      return `slot ${e.slot} written and re-read`;
    case "armed":
      return `slot ${e.slot} armed as ${e.entry}`;
  }
}
