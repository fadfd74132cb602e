/**
 * The machine event bus: boot phases, tasks, service state changes and
 * controller failures, in order. It keeps a bounded history so that a client
 * that connects late (`machinectl events --tail N`) still sees how boot went,
 * and never lets a slow subscriber hold up the node.
 */

/** What an event is about. */
export type MachineEventKind =
  | "phase"
  | "task"
  | "service"
  | "config"
  | "controller"
  | "power"
  | "network"
  | "api"
  /** An upgrade, rollback or bless of a boot slot (upgrade). */
  | "upgrade"
  /** Synthetic: the subscriber fell behind and `fields.dropped` events were lost. */
  | "overflow";

/** One event. */
export interface MachineEvent {
  /** Monotonic sequence number, from 1. */
  readonly seq: number;
  /** Epoch milliseconds (wall clock: it jumps when the clock is stepped). */
  readonly time: number;
  /**
   * Milliseconds on machined's monotonic clock (`performance.now()`, from its
   * start): the difference of two events' `monoMs` is a true duration, across
   * clock steps.
   */
  readonly monoMs: number;
  readonly kind: MachineEventKind;
  /** The phase, task, service or controller the event concerns. */
  readonly subject: string;
  /** A short verb or state: `started`, `done`, `failed`, `running`, ... */
  readonly action: string;
  readonly message: string;
  readonly fields?: Readonly<Record<string, string>>;
}

/** Options of {@link EventBus.subscribe}. */
export interface SubscribeOptions {
  /** Replay up to this many past events first. @default 0 */
  tail?: number;
  /** Replay events after this sequence number (wins over `tail`). */
  sinceSeq?: number;
  /** Ends the subscription. */
  signal?: AbortSignal;
  /** Events buffered for a slow subscriber before they are dropped (with an overflow event). @default 4096 */
  capacity?: number;
}

/** A bounded-history, fan-out event bus. */
export class EventBus {
  #history: MachineEvent[] = [];
  #seq = 0;
  #subscribers = new Set<Subscriber>();
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(
    readonly historySize = 1000,
    readonly now: () => number = Date.now,
    readonly monotonic: () => number = () => performance.now(),
  ) {}

  /** Records and fans out an event; returns it with its sequence number. */
  emit(
    kind: MachineEventKind,
    subject: string,
    action: string,
    message = "",
    fields?: Record<string, string>,
  ): MachineEvent {
    const event: MachineEvent = Object.freeze({
      seq: ++this.#seq,
      time: this.now(),
      monoMs: this.monotonic(),
      kind,
      subject,
      action,
      message,
      ...(fields ? { fields: Object.freeze({ ...fields }) } : {}),
    });
    this.#history.push(event);
    if (this.#history.length > this.historySize) this.#history.shift();
    for (const s of this.#subscribers) s.push(event);
    return event;
  }

  /** Past events, oldest first. */
  history(): readonly MachineEvent[] {
    return [...this.#history];
  }

  /**
   * An async stream of events: the requested replay, then live ones. A subscriber
   * that falls more than `capacity` behind loses its queue and next receives one
   * `overflow` event saying how many were dropped (never silent loss, never a
   * slowed node); it can catch up from the history with `sinceSeq`.
   */
  subscribe(
    options: SubscribeOptions = {},
  ): AsyncIterableIterator<MachineEvent> & { close(): void } {
    const replay = options.sinceSeq !== undefined
      ? this.#history.filter((e) => e.seq > options.sinceSeq!)
      : options.tail
      ? this.#history.slice(-options.tail)
      : [];
    const sub = new Subscriber(
      replay,
      options.capacity ?? 4096,
      () => this.#subscribers.delete(sub),
      this.now,
    );
    this.#subscribers.add(sub);
    for (const w of this.#waiters.filter((w) => this.#subscribers.size >= w.count)) w.resolve();
    this.#waiters = this.#waiters.filter((w) => this.#subscribers.size < w.count);
    if (options.signal) {
      if (options.signal.aborted) sub.close();
      else options.signal.addEventListener("abort", () => sub.close(), { once: true });
    }
    return sub;
  }

  /** Live subscriber count (for leak checks). */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** Resolves once at least `count` subscribers are attached (tests). */
  whenSubscribers(count: number): Promise<void> {
    if (this.#subscribers.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
}

class Subscriber implements AsyncIterableIterator<MachineEvent> {
  #queue: MachineEvent[];
  #dropped = 0;
  #waiting?: (r: IteratorResult<MachineEvent>) => void;
  #closed = false;

  constructor(
    replay: MachineEvent[],
    readonly capacity: number,
    readonly onClose: () => void,
    readonly now: () => number,
  ) {
    this.#queue = [...replay];
  }

  push(e: MachineEvent): void {
    if (this.#closed) return;
    if (this.#waiting) {
      const w = this.#waiting;
      this.#waiting = undefined;
      w({ value: e, done: false });
      return;
    }
    if (this.#queue.length >= this.capacity) {
      this.#dropped += this.#queue.length + 1;
      this.#queue = [];
      return;
    }
    this.#queue.push(e);
  }

  next(): Promise<IteratorResult<MachineEvent>> {
    if (this.#dropped > 0) {
      const dropped = this.#dropped;
      this.#dropped = 0;
      const value: MachineEvent = Object.freeze({
        seq: 0,
        time: this.now(),
        monoMs: performance.now(),
        kind: "overflow",
        subject: "",
        action: "dropped",
        message: `${dropped} events were dropped because this subscriber fell behind`,
        fields: Object.freeze({ dropped: String(dropped) }),
      });
      return Promise.resolve({ value, done: false });
    }
    const e = this.#queue.shift();
    if (e) return Promise.resolve({ value: e, done: false });
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
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
    this.#dropped = 0;
    this.onClose();
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
