/**
 * Deadlines on a bundle's byte stream, so a sender that stalls (or trickles
 * forever) cannot hold the ESP open for writing, and with it bless, rollback
 * and status, for longer than a known bound: no chunk within the idle
 * deadline, or the whole upgrade past its overall deadline, ends the stream
 * with {@link BundleError} `stalled`. The clock is injectable so tests sit at
 * the limit without waiting.
 */
import { BundleError } from "./errors.ts";

/** No byte of the bundle for this long refuses it (`stalled`). */
export const UPGRADE_IDLE_MS = 30_000;
/** A whole upgrade (head, receive, verify, arm) taking longer is refused (`stalled`). */
export const UPGRADE_DEADLINE_MS = 30 * 60_000;

/** A `--from` fetch's connect and response headers must take no longer (upgrade/fetch_bundle.ts). */
export const UPGRADE_FETCH_HEADERS_MS = 30_000;

/** The bounds of {@link withDeadlines}. */
export interface StreamDeadlines {
  /** @default UPGRADE_IDLE_MS */
  idleMs?: number;
  /** Milliseconds since the epoch (on `now`'s clock) after which no chunk is taken. */
  deadlineAt?: number;
  /** @default Date.now */
  now?: () => number;
}

/**
 * `source` with the idle deadline and the overall deadline applied to every
 * chunk. On a refusal the source's iterator is asked to stop (not awaited:
 * a stalled read may never settle; a fetch is aborted by its own signal).
 * @throws BundleError stalled.
 */
export async function* withDeadlines(
  source: AsyncIterable<Uint8Array>,
  d: StreamDeadlines = {},
): AsyncGenerator<Uint8Array> {
  const now = d.now ?? Date.now;
  const idleMs = d.idleMs ?? UPGRADE_IDLE_MS;
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    while (true) {
      const left = d.deadlineAt === undefined ? Infinity : d.deadlineAt - now();
      if (left <= 0) throw overdue();
      const wait = Math.min(idleMs, left);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), wait));
      const r = await Promise.race([it.next(), timeout]).finally(() => clearTimeout(timer));
      if (r === "timeout") {
        throw wait < idleMs ? overdue() : new BundleError(
          "stalled",
          `no byte of the bundle for ${idleMs / 1000} s (the idle deadline)`,
        );
      }
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!finished) it.return?.()?.catch(() => {});
  }
}

function overdue(): BundleError {
  return new BundleError("stalled", "the upgrade ran past its overall deadline");
}
