/**
 * The kernel's uevents as a stream of batches: the shape both backends give.
 * @module
 */

/** One kernel uevent (the kernel's own keys; udev's are never seen). */
export interface Uevent {
  /** `add`, `remove`, `change`, `move`, `bind`, `unbind`, `online`, `offline`. */
  action: string;
  /** The device under /sys, e.g. `/devices/virtual/block/loop0`. */
  devpath: string;
  /** `block`, `net`, `usb`, ... */
  subsystem: string;
  /** The node under /dev (block), e.g. `loop0`, `vda1`. */
  devname?: string;
  /** `disk` or `partition` for block devices. */
  devtype?: string;
  /** A network device's name. */
  interface?: string;
  ifindex?: number;
  seqnum?: number;
  major?: number;
  minor?: number;
  /** Every key of the message, the ones above included (at most 64). */
  vars: Readonly<Record<string, string>>;
}

/** What one `next` brings: the events since the last batch, and whether any were lost. */
export interface UeventBatch {
  events: Uevent[];
  /** Events dropped since the previous batch (queue full, or the socket overran). */
  dropped: number;
  /**
   * Something was lost (dropped, or a kernel message refused by the parser): the
   * events alone no longer describe the system, so the reader must re-list.
   */
  resync: boolean;
}

/** Counters since the subscription opened. */
export interface UeventCounters {
  /** Events queued for the reader. */
  received: number;
  /** Events dropped (queue full or socket overrun). */
  dropped: number;
  /** Kernel messages the parser refused (each forces a resync). */
  rejected: number;
  /** Messages from a sender other than the kernel, ignored. */
  foreign: number;
}

/** A live stream of uevents, queued (up to its capacity) from the moment it opened. */
export interface UeventSubscription {
  /**
   * The next batch: an empty one after `timeoutMs` with nothing new, undefined once closed.
   * @throws SysError when the receive loop failed for good (the subscription is then useless).
   */
  next(timeoutMs: number): Promise<UeventBatch | undefined>;
  counters(): UeventCounters;
  /** Stop receiving; pending and later `next` calls resolve undefined. */
  close(): void;
}

/**
 * Undelivered events a subscription holds before it drops and asks for a resync.
 * Far above one hotplug's burst (a disk with 128 partitions is ~130 events) and
 * small enough that a flood costs at most ~1 MiB.
 */
export const DEFAULT_UEVENT_CAPACITY = 1024;

/** Where uevents come from: the kernel (native) or a test (fake). */
export interface UeventBackend {
  /**
   * Start receiving kernel uevents.
   * @throws SysError when the socket cannot be opened.
   */
  subscribe(options?: { capacity?: number }): UeventSubscription;
}
