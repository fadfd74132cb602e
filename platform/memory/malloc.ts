/**
 * glibc's malloc heap in machined (native-ops/src/malloc_heap.rs): what it
 * holds, and handing its free pages back to the kernel (node/malloc_trim.ts
 * decides when). Separate from the
 * page-out backend because dev mode trims for real (it changes nothing but
 * machined's own heap) while its page-out stays a fake. One interface, a
 * native implementation (backend_native.ts) and a fake (backend_fake.ts).
 * @module
 */

/** mallinfo2 summed over every arena, in bytes. */
export interface MallocHeap {
  /** Non-mmapped space the arenas hold (brk heap and thread heaps). */
  arena: number;
  /** Space in mmapped chunks (large allocations). */
  mmapped: number;
  /** In use by the program (mmapped chunks included). */
  inUse: number;
  /** Free bytes the arenas keep: what a trim may give back, in whole pages. */
  free: number;
  /** Free bytes at the top of the main arena. */
  topFree: number;
}

/** machined's malloc heap, as far as it may steer it. */
export interface MallocBackend {
  /** The heap's figures now (takes the arenas' locks: microseconds). */
  heap(): MallocHeap;
  /** malloc_trim(0): every arena's whole free pages back to the kernel; true when any went. */
  trim(): boolean;
}
