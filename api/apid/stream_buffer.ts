/**
 * A bounded buffer between an upstream server stream (machined) and the
 * client's response: a pump reads ahead into a queue of at most
 * `maxMessages` messages and `maxBytes` bytes (always at least one message),
 * and stops reading while the queue is full, so a slow client holds back
 * machined instead of growing apid. A queue that stays full for `stallMs`
 * (the client took nothing) overflows: the upstream call is cancelled, the
 * queued messages are dropped, the stream's overflow marker (if it has one)
 * is sent, and the stream ends with ResourceExhausted.
 */
import { Code, ConnectError } from "@connectrpc/connect";

/** Options of {@link boundedStream}. */
export interface BoundedStreamOptions<T> {
  /** @default 16 */
  readonly maxMessages?: number;
  /** Encoded bytes held behind the head of the queue (which is always admitted). @default 256 KiB */
  readonly maxBytes?: number;
  /** How long a full queue may wait for the client. @default 10000 */
  readonly stallMs?: number;
  /** The encoded size of a message. */
  readonly sizeOf: (message: T) => number;
  /** The message that tells the client `dropped` messages were lost, if the RPC has one. */
  readonly overflowMarker?: (dropped: number) => T;
  /** Called once on overflow, before the marker is offered (e.g. unblock the response). */
  readonly onOverflow?: () => void;
  /** Cancels the upstream call (called on overflow and when the client goes away). */
  readonly cancelUpstream: () => void;
}

/** Stream defaults (documented in docs/api.md, "Limits"). */
export const STREAM_BUFFER_DEFAULTS = {
  maxMessages: 16,
  maxBytes: 256 * 1024,
  stallMs: 10_000,
} as const;

/** `source` through a bounded queue; see the module doc. */
export async function* boundedStream<T>(
  source: AsyncIterable<T>,
  o: BoundedStreamOptions<T>,
): AsyncGenerator<T> {
  const maxMessages = o.maxMessages ?? STREAM_BUFFER_DEFAULTS.maxMessages;
  const maxBytes = o.maxBytes ?? STREAM_BUFFER_DEFAULTS.maxBytes;
  const stallMs = o.stallMs ?? STREAM_BUFFER_DEFAULTS.stallMs;
  const queue: { message: T; size: number }[] = [];
  let bytes = 0;
  let done = false;
  let failure: unknown;
  let overflowed = false;
  let dropped = 0;
  let stopped = false;
  let wakeConsumer: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  const full = () => queue.length >= maxMessages || (queue.length > 0 && bytes >= maxBytes);
  const wake = () => {
    wakeConsumer?.();
    wakeConsumer = undefined;
  };
  const overflow = () => {
    if (overflowed || stopped) return;
    overflowed = true;
    dropped = queue.length;
    queue.length = 0;
    bytes = 0;
    o.cancelUpstream();
    wakePump?.();
    o.onOverflow?.();
    wake();
  };

  const pump = (async () => {
    try {
      for await (const message of source) {
        if (overflowed || stopped) break;
        // The head of the queue is always admitted, so its size matters only
        // once others wait behind it: a stream that keeps up never pays for sizeOf.
        const size = queue.length === 0 ? 0 : o.sizeOf(message);
        queue.push({ message, size });
        bytes += size;
        wake();
        while (full() && !overflowed && !stopped) {
          stallTimer ??= setTimeout(overflow, stallMs);
          await new Promise<void>((resolve) => wakePump = resolve);
          wakePump = undefined;
        }
      }
    } catch (e) {
      if (!overflowed && !stopped) failure = e;
    } finally {
      done = true;
      clearTimeout(stallTimer);
      wake();
    }
  })();

  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        bytes -= next.size;
        clearTimeout(stallTimer);
        stallTimer = undefined;
        wakePump?.();
        yield next.message;
        continue;
      }
      if (overflowed) {
        if (o.overflowMarker) yield o.overflowMarker(dropped);
        throw new ConnectError(
          `Stream overflow: the client read nothing for ${stallMs} ms while ${maxMessages} ` +
            `messages or ${maxBytes} bytes waited; ${dropped} queued messages were dropped`,
          Code.ResourceExhausted,
        );
      }
      if (done) {
        if (failure !== undefined) throw failure;
        return;
      }
      await new Promise<void>((resolve) => wakeConsumer = resolve);
    }
  } finally {
    stopped = true;
    clearTimeout(stallTimer);
    if (!done) o.cancelUpstream();
    wakePump?.();
    await pump;
  }
}
