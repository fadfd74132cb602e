/**
 * Kernel uevents (hotplug): a NETLINK_KOBJECT_UEVENT socket drained by a
 * native thread into a bounded queue, read as batches. A batch that says
 * `resync` means events were lost: the reader re-lists what it mirrors.
 * {@link NativeUeventBackend} is the kernel's; {@link FakeUeventBackend}
 * lets tests inject events, floods and failures.
 *
 * @example
 * ```ts
 * import { NativeUeventBackend } from "./platform/uevent/mod.ts";
 * const sub = new NativeUeventBackend().subscribe();
 * const batch = await sub.next(1_000);
 * for (const ev of batch?.events ?? []) console.log(ev.action, ev.devpath);
 * sub.close();
 * ```
 * @module
 */
export {
  DEFAULT_UEVENT_CAPACITY,
  type Uevent,
  type UeventBackend,
  type UeventBatch,
  type UeventCounters,
  type UeventSubscription,
} from "./backend.ts";
export { NativeUeventBackend } from "./backend_native.ts";
export { CountingUeventBackend } from "./counting.ts";
export { fakeUevent, FakeUeventBackend, type UeventInput } from "./backend_fake.ts";
export { ueventBackendConformance, type UeventFixture } from "./backend_conformance.ts";
