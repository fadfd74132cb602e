/**
 * An in-memory {@link UeventBackend}: tests inject events, floods and
 * failures, and every subscription behaves as the native one does (bounded
 * queue, drops counted, a resync flagged after a loss, close wakes waiters).
 * @module
 */
import { FaultInjector } from "../mod.ts";
import {
  DEFAULT_UEVENT_CAPACITY,
  type Uevent,
  type UeventBackend,
  type UeventBatch,
  type UeventCounters,
  type UeventSubscription,
} from "./backend.ts";

/** What a test gives {@link FakeUeventBackend.inject}: the rest is derived. */
export type UeventInput = Pick<Uevent, "action" | "devpath" | "subsystem"> & Partial<Uevent>;

/** Fills `vars` and the kernel's SEQNUM as the native parser would. */
export function fakeUevent(input: UeventInput, seqnum: number): Uevent {
  const ev: Uevent = { seqnum, ...input, vars: {} };
  const vars: Record<string, string> = {
    ACTION: ev.action,
    DEVPATH: ev.devpath,
    SUBSYSTEM: ev.subsystem,
    SEQNUM: String(ev.seqnum),
  };
  const keys = [
    ["DEVNAME", ev.devname],
    ["DEVTYPE", ev.devtype],
    ["INTERFACE", ev.interface],
    ["IFINDEX", ev.ifindex],
    ["MAJOR", ev.major],
    ["MINOR", ev.minor],
  ] as const;
  for (const [k, v] of keys) if (v !== undefined) vars[k] = String(v);
  ev.vars = { ...vars, ...input.vars };
  return ev;
}

class FakeUeventSubscription implements UeventSubscription {
  #queue: Uevent[] = [];
  #dropped = 0;
  #resync = false;
  #closed = false;
  #waiter?: () => void;
  readonly #counters: UeventCounters = { received: 0, dropped: 0, rejected: 0, foreign: 0 };

  constructor(
    private readonly capacity: number,
    private readonly faults: FaultInjector,
    private readonly onClose: (s: FakeUeventSubscription) => void,
  ) {}

  deliver(ev: Uevent | "lost" | "rejected" | "foreign"): void {
    if (this.#closed) return;
    if (ev === "foreign") {
      this.#counters.foreign++;
      return;
    }
    if (ev === "rejected") {
      this.#counters.rejected++;
      this.#resync = true;
    } else if (ev !== "lost" && this.#queue.length < this.capacity) {
      this.#queue.push(ev);
      this.#counters.received++;
    } else {
      this.#dropped++;
      this.#counters.dropped++;
      this.#resync = true;
    }
    this.#wake();
  }

  #wake(): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.();
  }

  async next(timeoutMs: number): Promise<UeventBatch | undefined> {
    this.faults.check("next", [timeoutMs]);
    if (!this.#ready() && !this.#closed && timeoutMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#waiter = undefined;
          resolve();
        }, timeoutMs);
        this.#waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.#closed) return undefined;
    const batch = { events: this.#queue, dropped: this.#dropped, resync: this.#resync };
    this.#queue = [];
    this.#dropped = 0;
    this.#resync = false;
    return batch;
  }

  #ready(): boolean {
    return this.#queue.length > 0 || this.#resync;
  }

  counters(): UeventCounters {
    return { ...this.#counters };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.onClose(this);
    this.#wake();
  }
}

/** A stateful stand-in for the kernel's uevent socket. */
export class FakeUeventBackend implements UeventBackend {
  /** Arms failures of `subscribe` and of a subscription's `next`. */
  readonly faults = new FaultInjector();
  readonly #subs = new Set<FakeUeventSubscription>();
  #seq = 0;

  subscribe(options: { capacity?: number } = {}): UeventSubscription {
    this.faults.check("subscribe", [options]);
    const capacity = Math.max(1, options.capacity ?? DEFAULT_UEVENT_CAPACITY);
    const sub = new FakeUeventSubscription(capacity, this.faults, (s) => this.#subs.delete(s));
    this.#subs.add(sub);
    return sub;
  }

  /** Send one event to every open subscription, as the kernel would. */
  inject(input: UeventInput): Uevent {
    const ev = fakeUevent(input, input.seqnum ?? ++this.#seq);
    for (const s of this.#subs) s.deliver(ev);
    return ev;
  }

  /** The socket overran: `count` events lost for every subscription (each asks for a resync). */
  overrun(count = 1): void {
    for (const s of this.#subs) for (let i = 0; i < count; i++) s.deliver("lost");
  }

  /** A kernel message the parser refused (forces a resync), or a non-kernel sender's (ignored). */
  garbage(kind: "rejected" | "foreign"): void {
    for (const s of this.#subs) s.deliver(kind);
  }

  /** Open subscriptions (a controller that stopped closes its own). */
  get subscriptions(): number {
    return this.#subs.size;
  }
}
