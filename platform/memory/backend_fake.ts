/**
 * FakeMemoryBackend: counts page-out passes and fails them on demand; FakeMallocBackend: a
 * heap of set figures that a trim empties of its free bytes.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import type { MemoryBackend, PageOutReport } from "./backend.ts";
import type { MallocBackend, MallocHeap } from "./malloc.ts";

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

/** A heap of given figures; `trim()` moves its free bytes out, as glibc would. */
export class FakeMallocBackend implements MallocBackend {
  readonly faults = new FaultInjector();
  /** Trims so far. */
  trims = 0;
  #heap: MallocHeap;

  constructor(heap: Partial<MallocHeap> = {}) {
    this.#heap = { arena: 0, mmapped: 0, inUse: 0, free: 0, topFree: 0, ...heap };
  }

  /** Sets the figures the next {@link heap} reads (a heap that grew, say). */
  set(heap: Partial<MallocHeap>): void {
    this.#heap = { ...this.#heap, ...heap };
  }

  heap(): MallocHeap {
    this.faults.check("heap", []);
    return { ...this.#heap };
  }

  trim(): boolean {
    this.faults.check("trim", []);
    this.trims++;
    const gave = this.#heap.free > 0;
    this.#heap = { ...this.#heap, arena: this.#heap.arena - this.#heap.free, free: 0, topFree: 0 };
    return gave;
  }
}
