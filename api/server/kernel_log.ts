/**
 * What `Dmesg` asks of machined: the kernel log as a stream. platform/kmsg's
 * backends (NativeKmsgBackend, FakeKmsgBackend) satisfy {@link KernelLog} as
 * they are. The kernel's reader has no "last N" option, so {@link
 * readKernelLog} adds `tail` on top, using the kernel's sequence numbers to
 * tell the backlog from what comes after it.
 */
import type { KmsgGap, KmsgRecord } from "../../platform/kmsg/mod.ts";

/** One kernel log record: platform/kmsg's, which owns the record's shape. */
export type KernelLogRecord = KmsgRecord;

/** Records the kernel overwrote before they were read (platform/kmsg's gap). */
export type KernelLogGap = KmsgGap;

/** Options of {@link KernelLog.read}. */
export interface KernelLogReadOptions {
  /** After the records in the buffer, keep streaming new ones until `signal`. */
  follow?: boolean;
  signal?: AbortSignal;
}

/**
 * The kernel log. Each `read` is an independent reader starting at the oldest
 * record still in the kernel's buffer; a non-follow read ends at the newest.
 * It may throw (a SysError, e.g. EPERM) when the log cannot be opened.
 */
export interface KernelLog {
  read(options?: KernelLogReadOptions): AsyncIterable<KernelLogRecord | KernelLogGap>;
}

/** Options of {@link readKernelLog}. */
export interface ReadKernelLogOptions extends KernelLogReadOptions {
  /** Only the last `tail` records of the buffer; all when undefined. */
  tail?: number;
}

/**
 * The kernel log with `tail`. Without `tail` it is one read. With `tail`, a
 * first, non-follow read keeps the last `tail` records (and notes the newest
 * sequence number); with `follow`, a second read then skips everything up to
 * that number and streams the rest. A gap is passed on only where it falls
 * among the records being sent.
 */
export async function* readKernelLog(
  log: KernelLog,
  options: ReadKernelLogOptions = {},
): AsyncGenerator<KernelLogRecord | KernelLogGap> {
  const { tail, follow, signal } = options;
  if (tail === undefined) {
    yield* log.read({ follow, signal });
    return;
  }
  if (!Number.isInteger(tail) || tail < 0) {
    throw new RangeError(`Kernel log tail must be a whole number >= 0, got ${tail}`);
  }
  // Only records count toward `tail`; gaps stay where they fell among them.
  const kept: (KernelLogRecord | KernelLogGap)[] = [];
  let records = 0;
  let newest = -1;
  for await (const r of log.read({ follow: false, signal })) {
    kept.push(r);
    if ("lost" in r) continue;
    newest = r.seq;
    if (++records <= tail) continue;
    // Drop the oldest record, with any gaps before it.
    while ("lost" in kept.shift()!) { /* a gap before the dropped record */ }
    records--;
  }
  // A gap first in the window says nothing about the records shown: drop it.
  while (kept.length > 0 && "lost" in kept[0]) kept.shift();
  yield* kept;
  if (!follow || signal?.aborted) return;
  let caughtUp = newest < 0;
  for await (const r of log.read({ follow: true, signal })) {
    if ("lost" in r) {
      if (caughtUp) yield r;
      continue;
    }
    if (r.seq <= newest) continue;
    caughtUp = true;
    yield r;
  }
}
