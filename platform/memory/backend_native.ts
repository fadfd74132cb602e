/**
 * NativeMemoryBackend: MADV_PAGEOUT through native-ops/src/page_out.rs.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { MemoryBackend, PageOutReport } from "./backend.ts";

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
