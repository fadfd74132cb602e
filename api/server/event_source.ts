/**
 * Machine events for the Events RPC: the interface machined's event bus
 * implements, and a small in-memory hub that does so.
 */

/** Something that happened on the machine. */
export interface MachineEvent {
  /** e.g. `service`, `config`, `boot`, `power`; `overflow` when a subscriber fell behind. */
  readonly kind: string;
  readonly message: string;
  readonly time: Date;
  /** What it concerns, e.g. `service/containerd`. */
  readonly subject: string;
}

/** A source of live machine events. */
export interface EventSource {
  /**
   * Live events from now on until `signal` aborts (the iterable then ends).
   * Implementations must not block publishers on a slow subscriber.
   */
  subscribe(options: { signal: AbortSignal }): AsyncIterable<MachineEvent>;
}

/** An {@link EventSource} that can be published to. */
export interface EventHub extends EventSource {
  publish(event: MachineEvent): void;
  /** Current subscribers (for leak checks). */
  readonly subscribers: number;
  /** Resolves once at least `count` subscribers are attached (tests). */
  whenSubscribers(count: number): Promise<void>;
}

/**
 * A broadcast hub: each subscriber has a bounded queue; when it overflows the
 * queue is dropped and replaced by one `overflow` event saying how many were lost.
 * @param capacity events held per slow subscriber. @default 1024
 */
export function createEventHub(capacity = 1024): EventHub {
  const subs = new Set<Subscriber>();
  let waiters: { count: number; resolve: () => void }[] = [];
  const notify = () => {
    const ready = waiters.filter((w) => subs.size >= w.count);
    waiters = waiters.filter((w) => subs.size < w.count);
    for (const w of ready) w.resolve();
  };
  return {
    publish(event) {
      for (const s of subs) s.push(event);
    },
    get subscribers() {
      return subs.size;
    },
    whenSubscribers(count) {
      return new Promise((resolve) => {
        waiters.push({ count, resolve });
        notify();
      });
    },
    subscribe({ signal }) {
      return {
        [Symbol.asyncIterator]() {
          const sub = new Subscriber(capacity, () => subs.delete(sub));
          subs.add(sub);
          notify();
          if (signal.aborted) sub.close();
          else signal.addEventListener("abort", () => sub.close(), { once: true });
          return sub;
        },
      };
    },
  };
}

class Subscriber implements AsyncIterator<MachineEvent> {
  #queue: MachineEvent[] = [];
  #dropped = 0;
  #closed = false;
  #waiting?: (r: IteratorResult<MachineEvent>) => void;

  constructor(readonly capacity: number, readonly onClose: () => void) {}

  push(event: MachineEvent): void {
    if (this.#closed) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: event, done: false });
      return;
    }
    if (this.#queue.length >= this.capacity) {
      this.#dropped += this.#queue.length + 1;
      this.#queue = [];
      return;
    }
    this.#queue.push(event);
  }

  next(): Promise<IteratorResult<MachineEvent>> {
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    if (this.#dropped > 0) {
      const dropped = this.#dropped;
      this.#dropped = 0;
      return Promise.resolve({
        value: {
          kind: "overflow",
          message: `${dropped} events were dropped`,
          time: new Date(),
          subject: "",
        },
        done: false,
      });
    }
    const head = this.#queue.shift();
    if (head) return Promise.resolve({ value: head, done: false });
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  return(): Promise<IteratorResult<MachineEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.onClose();
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }
}
