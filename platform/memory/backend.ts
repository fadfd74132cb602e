/**
 * What machined may do about its own resident memory: hand the kernel back
 * the clean file pages it mapped but no longer touches (MADV_PAGEOUT over its
 * file-backed mappings, native-ops/src/page_out.rs). One interface, a native
 * implementation and a fake that records calls and injects failures.
 * @module
 */

/** What one page-out pass advised. */
export interface PageOutReport {
  /** File-backed mappings advised. */
  ranges: number;
  /** Their total length in bytes (mapped, not necessarily resident). */
  bytes: number;
  /** Mappings the kernel refused (locked or special): skipped. */
  refused: number;
}

/** machined's own memory, as far as it may steer it. */
export interface MemoryBackend {
  /**
   * madvise(MADV_PAGEOUT) over this process's file-backed mappings: clean
   * file pages go back to the kernel, and fault back in when touched.
   * @throws SysError when the kernel refuses the advice outright (before Linux 5.4: EINVAL on
   * every mapping is reported as `refused`, not thrown).
   */
  pageOutFileMappings(): PageOutReport;
}
