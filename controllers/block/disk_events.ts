/**
 * Block hotplug by kernel uevents, for {@link DiskDiscoveryController}: a
 * watch that turns `block` uevents into the names of the disks to re-read,
 * and says when only a full rescan will do (events were lost, or too many
 * disks changed at once). The mapping is pure ({@link disksOfUevents}).
 * @module
 */
import type { Uevent, UeventBackend, UeventSubscription } from "../../platform/uevent/mod.ts";

/** More changed disks than this in one go: rescan everything instead. */
export const MAX_PENDING_DISKS = 64;

/** What the next reconcile must do. */
export type DiskWork = { full: true } | { full: false; disks: string[] };

/** Thrown when the uevent stream could not be opened or failed. */
export class DiskEventsError extends Error {
  override name = "DiskEventsError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * The whole disks a batch of uevents touches, by their name under /sys/block:
 * a disk's own events name it, a partition's name its parent. Other subsystems
 * are ignored. Pure.
 */
export function disksOfUevents(events: readonly Uevent[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) {
    if (e.subsystem !== "block") continue;
    const parts = e.devpath.split("/").filter((p) => p !== "");
    const name = e.devtype === "partition" ? parts.at(-2) : parts.at(-1);
    if (name && !name.includes("..")) out.add(name);
  }
  return out;
}

/** Pending disk work, fed by a uevent subscription while `run` runs. */
export class DiskEventWatch {
  #pending = new Set<string>();
  #full = true;
  #live = false;

  constructor(private readonly uevents: UeventBackend) {}

  /** True while uevents are being received (the periodic rescan is then only a safety net). */
  get live(): boolean {
    return this.#live;
  }

  /** Take the work queued so far: nothing queued means a full rescan (a resync or an input changed). */
  take(): DiskWork {
    const disks = [...this.#pending];
    this.#pending.clear();
    if (this.#full || disks.length === 0) {
      this.#full = false;
      return { full: true };
    }
    return { full: false, disks };
  }

  /**
   * Subscribe and queue work until `signal` aborts, calling `wake` after each batch
   * that brought some. A lost event (resync) queues a full rescan.
   * @throws DiskEventsError when the stream cannot be opened or fails; the
   * controller then falls back to its periodic rescan.
   */
  async run(wake: () => void, signal: AbortSignal): Promise<void> {
    let sub: UeventSubscription;
    try {
      sub = this.uevents.subscribe();
    } catch (e) {
      throw new DiskEventsError("Cannot subscribe to block uevents", { cause: e });
    }
    const close = () => sub.close();
    signal.addEventListener("abort", close, { once: true });
    // Anything that changed before the subscription is caught by one full rescan after it.
    this.#live = true;
    this.#full = true;
    wake();
    try {
      while (!signal.aborted) {
        const batch = await sub.next(5_000);
        if (!batch) break;
        if (this.#queue(batch.events, batch.resync)) wake();
      }
    } catch (e) {
      if (!signal.aborted) {
        throw new DiskEventsError("Block uevent stream failed; rescanning periodically", {
          cause: e,
        });
      }
    } finally {
      this.#live = false;
      this.#full = true;
      signal.removeEventListener("abort", close);
      sub.close();
      if (!signal.aborted) wake();
    }
  }

  #queue(events: readonly Uevent[], resync: boolean): boolean {
    const disks = disksOfUevents(events);
    for (const d of disks) this.#pending.add(d);
    if (resync || this.#pending.size > MAX_PENDING_DISKS) {
      this.#full = true;
      this.#pending.clear();
    }
    return resync || disks.size > 0;
  }
}
