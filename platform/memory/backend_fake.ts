/**
 * FakeMemoryBackend: counts page-out passes and fails them on demand.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import type { MemoryBackend, PageOutReport } from "./backend.ts";

/** A memory backend that touches nothing. */
export class FakeMemoryBackend implements MemoryBackend {
  readonly faults = new FaultInjector();
  /** Passes made so far. */
  passes = 0;

  constructor(
    private readonly report: PageOutReport = { ranges: 3, bytes: 96 << 20, refused: 0 },
  ) {}

  pageOutFileMappings(): PageOutReport {
    this.faults.check("pageOutFileMappings", []);
    this.passes++;
    return { ...this.report };
  }
}
