/**
 * {@link UeventBackend} over a NETLINK_KOBJECT_UEVENT socket in native-ops,
 * whose own thread drains the socket into a bounded queue. The only file in
 * platform/uevent that imports the addon. Needs no privilege to listen.
 * @module
 */
import { loadNative, toSysError } from "../../native-ops/mod.ts";
import {
  DEFAULT_UEVENT_CAPACITY,
  type Uevent,
  type UeventBackend,
  type UeventBatch,
  type UeventCounters,
  type UeventSubscription,
} from "./backend.ts";

// Shapes returned by the addon (see native-ops/src/napi_uevent.rs).
interface NativeUevent extends Omit<Uevent, "vars"> {
  vars: Record<string, string>;
}
interface NativeStream {
  next(timeoutMs: number): Promise<
    { events: NativeUevent[]; dropped: number; resync: boolean } | null
  >;
  counters(): UeventCounters;
  close(): void;
}

function clean(e: NativeUevent): Uevent {
  const out = { ...e } as Record<string, unknown>;
  for (const k of Object.keys(out)) if (out[k] === undefined || out[k] === null) delete out[k];
  return out as unknown as Uevent;
}

class NativeUeventSubscription implements UeventSubscription {
  constructor(private readonly inner: NativeStream) {}

  async next(timeoutMs: number): Promise<UeventBatch | undefined> {
    const t = Math.max(0, Math.min(Math.floor(timeoutMs), 0xffff_ffff));
    let b;
    try {
      b = await this.inner.next(t);
    } catch (e) {
      throw toSysError(e);
    }
    if (b === null) return undefined;
    return { events: b.events.map(clean), dropped: b.dropped, resync: b.resync };
  }

  counters(): UeventCounters {
    return this.inner.counters();
  }

  close(): void {
    this.inner.close();
  }
}

/** The kernel's uevents. */
export class NativeUeventBackend implements UeventBackend {
  readonly #n = loadNative();

  subscribe(options: { capacity?: number } = {}): UeventSubscription {
    const capacity = options.capacity ?? DEFAULT_UEVENT_CAPACITY;
    return new NativeUeventSubscription(this.#n.ueventSubscribe(capacity) as NativeStream);
  }
}
