/**
 * FakeKmsgBackend: a kernel log buffer in memory. Tests append records (or a
 * gap) and followers see them; `faults` can make `read` fail (op `open`).
 * @module
 */
import { FaultInjector } from "../mod.ts";
import type { KmsgBackend, KmsgGap, KmsgReadOptions } from "./backend.ts";
import type { KmsgRecord } from "./record.ts";

/** The in-memory kernel log. */
export class FakeKmsgBackend implements KmsgBackend {
  readonly faults = new FaultInjector();
  readonly #entries: Array<KmsgRecord | KmsgGap> = [];
  #seq = 0;
  #waiters = new Set<() => void>();

  /** Appends a record (info level, kernel facility, unless given). */
  log(text: string, record: Partial<KmsgRecord> = {}): KmsgRecord {
    const r: KmsgRecord = {
      level: 6,
      facility: 0,
      seq: this.#seq++,
      usec: this.#seq * 1000,
      flags: "-",
      fields: {},
      text,
      ...record,
    };
    this.#push(r);
    return r;
  }

  /** Simulates overwritten records. */
  lose(): void {
    this.#push({ lost: true });
  }

  async *read(options: KmsgReadOptions = {}): AsyncGenerator<KmsgRecord | KmsgGap> {
    this.faults.check("open", []);
    let next = 0;
    let wake: (() => void) | undefined;
    const waiter = () => wake?.();
    const onAbort = () => wake?.();
    this.#waiters.add(waiter);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (!options.signal?.aborted) {
        if (next < this.#entries.length) {
          yield this.#entries[next++];
          continue;
        }
        if (!options.follow) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.#waiters.delete(waiter);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  #push(e: KmsgRecord | KmsgGap): void {
    this.#entries.push(e);
    for (const w of this.#waiters) w();
  }
}
