/**
 * machined's own memory: paging out the file pages boot touched once
 * (boot/page_out.ts decides when).
 *
 * @example
 * ```ts
 * import { NativeMemoryBackend } from "./platform/memory/mod.ts";
 * const { ranges, bytes } = new NativeMemoryBackend().pageOutFileMappings();
 * ```
 * @module
 */
export type { MemoryBackend, PageOutReport } from "./backend.ts";
export { NativeMemoryBackend } from "./backend_native.ts";
export { FakeMemoryBackend } from "./backend_fake.ts";
