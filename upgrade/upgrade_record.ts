/**
 * The upgrade record on STATE (`upgrade.json`): the downgrade floor and the
 * last upgrade's outcome, so both survive a reboot (the ESP's file names
 * stay the truth about the slots). {@link UpgradeBook} keeps it in memory
 * from machined's start and writes it through whenever STATE is mounted: an
 * outcome or a floor raise noted before STATE is mounted is merged into the
 * record found there once it is (the floor taking the higher of both). A
 * reset wipes STATE and with it the record (docs/decisions.md).
 */
import { join } from "node:path";
import { writeFileAtomic } from "../pki/mod.ts";
import type { UpgradeLastOutcome } from "../resources/mod.ts";
import { raiseFloor } from "./version_floor.ts";

/** The record's file name at the root of STATE. */
export const UPGRADE_RECORD_FILE = "upgrade.json";

/** What `upgrade.json` holds. */
export interface UpgradeRecord {
  readonly version: 1;
  /** The downgrade floor (a dotted version), raised when a slot is blessed. */
  readonly floor?: string;
  /** The last lasting outcome (armed, upgraded, rolled back); refusals are not written. */
  readonly last?: UpgradeLastOutcome;
  /**
   * The image version machined last ran from each slot (its release record):
   * the imager's entries name no version, an installed one does.
   */
  readonly ran?: Partial<Record<"A" | "B", string>>;
}

/** Where the record lives: STATE on a node, memory in tests. */
export interface RecordStore {
  /** Whether it can be read and written now (STATE mounted). */
  available(): boolean;
  /** The record, or undefined when there is none yet. @throws Error for a malformed one */
  load(): Promise<UpgradeRecord | undefined>;
  save(record: UpgradeRecord): Promise<void>;
}

const OUTCOMES = new Set(["none", "armed", "upgraded", "rolled-back", "refused"]);

/**
 * Parse `upgrade.json`'s text.
 * @throws Error naming the file and what is wrong. Pure.
 */
export function parseRecord(text: string, where: string): UpgradeRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`);
  }
  const r = v as Record<string, unknown>;
  if (typeof r !== "object" || r === null || r.version !== 1) {
    throw new Error(`${where}: expected an object with version 1`);
  }
  if (r.floor !== undefined && typeof r.floor !== "string") {
    throw new Error(`${where}: floor must be a string`);
  }
  const ran = r.ran as Record<string, unknown> | undefined;
  if (
    ran !== undefined &&
    (typeof ran !== "object" || ran === null ||
      !Object.entries(ran).every(([k, v]) => (k === "A" || k === "B") && typeof v === "string"))
  ) {
    throw new Error(`${where}: ran must map slots A and B to versions`);
  }
  const last = r.last as Record<string, unknown> | undefined;
  if (last !== undefined) {
    const strings = ["version", "slot", "reason", "at"].every((k) => typeof last[k] === "string");
    if (!strings || !OUTCOMES.has(last.outcome as string)) {
      throw new Error(`${where}: last must be an outcome with version, slot, reason and at`);
    }
  }
  return r as unknown as UpgradeRecord;
}

/** The record at `<dir>/upgrade.json`, where `dir()` is STATE's mount point while mounted. */
export function dirRecordStore(dir: () => string | undefined): RecordStore {
  return {
    available: () => dir() !== undefined,
    async load() {
      const path = join(dir()!, UPGRADE_RECORD_FILE);
      const text = await Deno.readTextFile(path).catch((e) => {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      });
      return text === undefined ? undefined : parseRecord(text, path);
    },
    async save(record) {
      await writeFileAtomic(
        join(dir()!, UPGRADE_RECORD_FILE),
        JSON.stringify(record, null, 2) + "\n",
        { mode: 0o644 },
      );
    },
  };
}

/** A record store in memory (tests; a node without STATE). */
export function memoryRecordStore(initial?: UpgradeRecord, available = true): RecordStore & {
  record?: UpgradeRecord;
  setAvailable(on: boolean): void;
} {
  let on = available;
  const s = {
    record: initial,
    available: () => on,
    load: () => Promise.resolve(s.record),
    save: (r: UpgradeRecord) => {
      s.record = structuredClone(r);
      return Promise.resolve();
    },
    setAvailable: (v: boolean) => (on = v),
  };
  return s;
}

/** See the module doc. */
export class UpgradeBook {
  #floor?: string;
  #last?: UpgradeLastOutcome;
  #ran: Partial<Record<"A" | "B", string>> = {};
  /** A lasting outcome noted this boot (wins over the one loaded from STATE). */
  #noted = false;
  #loaded = false;
  #dirty = false;
  /** A refusal: shown, never written. */
  #refused?: UpgradeLastOutcome;

  constructor(
    private readonly store: RecordStore,
    private readonly onError: (what: string, e: unknown) => void = () => {},
  ) {}

  /** The floor recorded (in memory, and on STATE once written). */
  get floor(): string | undefined {
    return this.#floor;
  }

  /** The last outcome, a refusal of this boot included. */
  get last(): UpgradeLastOutcome | undefined {
    return this.#refused ?? this.#last;
  }

  /** The version machined last ran from each slot. */
  get ran(): Readonly<Partial<Record<"A" | "B", string>>> {
    return this.#ran;
  }

  /** Whether the record on STATE has been read (it may hold a higher floor). */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** Read STATE's record once it is mounted, merge, and write back what is pending. */
  async sync(): Promise<void> {
    if (!this.store.available()) return;
    if (!this.#loaded) {
      let r: UpgradeRecord | undefined;
      try {
        r = await this.store.load();
      } catch (e) {
        this.onError("the upgrade record on STATE is unreadable; it will be rewritten", e);
      }
      this.#loaded = true;
      const floor = raiseFloor(r?.floor, this.#floor);
      if (floor !== r?.floor || (this.#noted && this.#last)) this.#dirty = true;
      this.#floor = floor;
      if (!this.#noted) this.#last = r?.last;
      const ran = { ...r?.ran, ...this.#ran };
      if (JSON.stringify(ran) !== JSON.stringify(r?.ran ?? {})) this.#dirty = true;
      this.#ran = ran;
    }
    if (!this.#dirty) return;
    try {
      await this.store.save({ version: 1, floor: this.#floor, last: this.#last, ran: this.#ran });
      this.#dirty = false;
    } catch (e) {
      this.onError("cannot write the upgrade record on STATE", e);
    }
  }

  /** Raise the floor to `blessed` (it never falls); written through. */
  async raise(blessed: string | undefined): Promise<void> {
    const floor = raiseFloor(this.#floor, blessed);
    if (floor !== this.#floor) {
      this.#floor = floor;
      this.#dirty = true;
    }
    await this.sync();
  }

  /** Note that this boot runs `version` from `slot`; written through. */
  async noteRan(slot: "A" | "B", version: string): Promise<void> {
    if (this.#ran[slot] !== version) {
      this.#ran = { ...this.#ran, [slot]: version };
      this.#dirty = true;
    }
    await this.sync();
  }

  /** Note a lasting outcome (armed, upgraded, rolled back); written through. */
  async note(o: Omit<UpgradeLastOutcome, "at">, at = new Date()): Promise<void> {
    this.#last = { ...o, at: at.toISOString() };
    this.#refused = undefined;
    this.#noted = true;
    this.#dirty = true;
    await this.sync();
  }

  /** Note a refusal: shown by UpgradeStatus until the next outcome, never written. */
  refused(version: string, reason: string, at = new Date()): void {
    this.#refused = { outcome: "refused", version, slot: "", reason, at: at.toISOString() };
  }
}
