/**
 * NativeKmsgBackend: /dev/kmsg through native-ops, opened non-blocking; a
 * follow waits in bounded polls on a worker thread, so an idle follower holds
 * no JS timer and an abort ends it at once (the close wakes the poll).
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { KmsgBackend, KmsgGap, KmsgReadOptions } from "./backend.ts";
import { type KmsgRecord, parseKmsgRecord } from "./record.ts";

interface KmsgNative {
  kmsgOpen(path: string): number;
  kmsgRead(
    id: number,
    max: number,
    waitMs: number,
  ): Promise<{ records: string[]; lost: boolean; closed: boolean }>;
  kmsgClose(id: number): void;
}

/** How long one poll waits before it is re-issued. */
const WAIT_MS = 30_000;
const BATCH = 256;

/** The real kernel log. */
export class NativeKmsgBackend implements KmsgBackend {
  /** @param path the device. @default "/dev/kmsg" */
  constructor(readonly path = "/dev/kmsg") {}

  async *read(options: KmsgReadOptions = {}): AsyncGenerator<KmsgRecord | KmsgGap> {
    const native = loadNative() as unknown as KmsgNative;
    const id = native.kmsgOpen(this.path);
    const onAbort = () => native.kmsgClose(id);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (!options.signal?.aborted) {
        const batch = await native.kmsgRead(id, BATCH, options.follow ? WAIT_MS : 0);
        if (batch.lost) yield { lost: true };
        for (const raw of batch.records) {
          const r = parseKmsgRecord(raw);
          if (r) yield r;
        }
        if (batch.closed) return;
        if (!options.follow && batch.records.length === 0 && !batch.lost) return;
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      native.kmsgClose(id);
    }
  }
}
