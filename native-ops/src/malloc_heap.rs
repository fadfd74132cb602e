//! glibc's malloc heap in this process: what it holds (mallinfo2) and giving
//! its free pages back to the kernel (malloc_trim).
//!
//! Why: machined's native allocations (Deno's ops and buffers, ArrayBuffer
//! backing stores, this addon) come from glibc's main arena, which returns
//! memory to the kernel only from the top of its brk heap, and only when the
//! free top passes M_TRIM_THRESHOLD. A heap that grew under load and whose top
//! is still in use keeps every free page below it resident for good.
//! `malloc_trim(0)` walks every arena and `madvise(MADV_DONTNEED)`s the whole
//! free pages inside it as well, so the resident figure follows what is in
//! use (docs/decisions.md, "machined trims its malloc heap").

/// The heap's figures, bytes (mallinfo2, summed over every arena).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MallocHeap {
    /// Non-mmapped space the arenas hold (the brk heap and the thread arenas' heaps).
    pub arena: u64,
    /// Space in mmapped chunks (large allocations).
    pub mmapped: u64,
    /// Bytes in use by the program.
    pub in_use: u64,
    /// Free bytes the arenas keep.
    pub free: u64,
    /// Free bytes at the top of the main arena, which trimming the top would release.
    pub top_free: u64,
}

/// mallinfo2() now.
pub fn malloc_heap() -> MallocHeap {
    // SAFETY: mallinfo2 takes the arenas' locks and only reads them.
    let m = unsafe { libc::mallinfo2() };
    MallocHeap {
        arena: m.arena as u64,
        mmapped: m.hblkhd as u64,
        in_use: m.uordblks as u64 + m.hblkhd as u64,
        free: m.fordblks as u64,
        top_free: m.keepcost as u64,
    }
}

/// malloc_trim(0): every arena's whole free pages back to the kernel. True when any was released.
pub fn malloc_trim() -> bool {
    // SAFETY: malloc_trim takes each arena's lock; it frees nothing in use.
    unsafe { libc::malloc_trim(0) == 1 }
}

pub mod js {
    use napi_derive::napi;

    /// {@link mallocHeap}'s figures, bytes.
    #[napi(object)]
    pub struct MallocHeapJs {
        pub arena: f64,
        pub mmapped: f64,
        pub in_use: f64,
        pub free: f64,
        pub top_free: f64,
    }

    /// glibc's malloc heap in this process (mallinfo2 over every arena).
    #[napi]
    pub fn malloc_heap() -> MallocHeapJs {
        let m = super::malloc_heap();
        MallocHeapJs {
            arena: m.arena as f64,
            mmapped: m.mmapped as f64,
            in_use: m.in_use as f64,
            free: m.free as f64,
            top_free: m.top_free as f64,
        }
    }

    /// malloc_trim(0): free pages of every arena back to the kernel; true when any was released.
    #[napi]
    pub fn malloc_trim() -> bool {
        super::malloc_trim()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_gives_back_freed_pages() {
        // 64 small blocks of 64 KiB (under the mmap threshold: they come from an arena),
        // the last one kept so that the top cannot simply shrink.
        let blocks: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 64 << 10]).collect();
        let before = malloc_heap();
        assert!(before.in_use >= 4 << 20, "{before:?}");
        let keep = blocks.into_iter().last();
        let freed = malloc_heap();
        assert!(freed.free >= 3 << 20, "the blocks are free now: {freed:?}");
        assert!(
            malloc_trim(),
            "4 MiB of free blocks: the trim released pages"
        );
        let after = malloc_heap();
        // cargo runs other tests on other threads: allow what they allocate meanwhile.
        assert!(
            after.in_use <= freed.in_use + (1 << 20),
            "{freed:?} -> {after:?}"
        );
        drop(keep);
    }
}
