/**
 * NativeMemoryBackend: MADV_PAGEOUT through native-ops/src/page_out.rs; NativeMallocBackend:
 * mallinfo2 and malloc_trim through native-ops/src/malloc_heap.rs.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { MemoryBackend, PageOutReport } from "./backend.ts";
import type { MallocBackend, MallocHeap } from "./malloc.ts";

interface MemoryNative {
  pageOutFileMappings(): PageOutReport;
}

/** The kernel's answer for this process. */
export class NativeMemoryBackend implements MemoryBackend {
  readonly #load: () => MemoryNative;

  constructor(native?: MemoryNative) {
    this.#load = () => native ?? (loadNative() as unknown as MemoryNative);
  }

  pageOutFileMappings(): PageOutReport {
    return this.#load().pageOutFileMappings();
  }
}

interface MallocNative {
  mallocHeap(): MallocHeap;
  mallocTrim(): boolean;
}

/** This process's glibc heap. */
export class NativeMallocBackend implements MallocBackend {
  readonly #load: () => MallocNative;

  constructor(native?: MallocNative) {
    this.#load = () => native ?? (loadNative() as unknown as MallocNative);
  }

  heap(): MallocHeap {
    return this.#load().mallocHeap();
  }

  trim(): boolean {
    return this.#load().mallocTrim();
  }
}
