/**
 * The kernel log (`dmesg`): /dev/kmsg records parsed and streamed, with
 * follow. {@link NativeKmsgBackend} reads the device through native-ops;
 * {@link FakeKmsgBackend} is an in-memory log for tests.
 *
 * @example
 * ```ts
 * import { formatKmsgRecord, NativeKmsgBackend } from "./platform/kmsg/mod.ts";
 * for await (const r of new NativeKmsgBackend().read()) {
 *   if (!("lost" in r)) console.log(formatKmsgRecord(r));
 * }
 * ```
 * @module
 */
export type { KmsgBackend, KmsgGap, KmsgReadOptions } from "./backend.ts";
export { NativeKmsgBackend } from "./backend_native.ts";
export { FakeKmsgBackend } from "./backend_fake.ts";
export { kmsgBackendConformance, type KmsgFixture } from "./backend_conformance.ts";
export { formatKmsgRecord, KMSG_LEVELS, type KmsgRecord, parseKmsgRecord } from "./record.ts";
