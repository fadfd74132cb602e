/**
 * machined's own memory: paging out the file pages boot touched once
 * (boot/page_out.ts decides when), and glibc's malloc heap: its figures and
 * giving its free pages back (node/malloc_trim.ts decides when).
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
export type { MallocBackend, MallocHeap } from "./malloc.ts";
export { FakeMallocBackend } from "./backend_fake.ts";
export { NativeMallocBackend } from "./backend_native.ts";
