//! Hand the kernel back the clean file pages this process has mapped but no
//! longer touches: madvise(MADV_PAGEOUT) over every file-backed mapping in
//! /proc/self/maps.
//!
//! Why: most of machined's resident file memory is the Deno binary's text and
//! read-only data that boot touched once (the snapshot deserializer, V8's
//! compilers warming up, module evaluation). The kernel would reclaim those
//! pages under pressure anyway; paging them out once boot has settled makes
//! machined's PSS its working set, so the figure an operator reads is the one
//! that matters. Pages touched again fault back in from the page cache or the
//! root image. Anonymous memory is untouched: with no swap MADV_PAGEOUT skips
//! it, and dirty private pages are anonymous. Needs Linux 5.4.

use crate::error::{SysErr, SysResult};

/// What one pass advised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageOutReport {
    /// File-backed mappings advised.
    pub ranges: u32,
    /// Their total length in bytes (mapped, not necessarily resident).
    pub bytes: u64,
    /// Mappings the kernel refused (EINVAL on a locked or special mapping): skipped.
    pub refused: u32,
}

/// One file-backed range of a `/proc/<pid>/maps` line: start, end. Pure.
pub fn file_backed_range(line: &str) -> Option<(usize, usize)> {
    let mut fields = line.split_whitespace();
    let range = fields.next()?;
    // perms, offset, dev, inode, then the path (absent for anonymous maps).
    let path = fields.nth(4)?;
    if !path.starts_with('/') {
        return None; // [heap], [stack], [vdso], anon_inode:…
    }
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (end > start).then_some((start, end))
}

/// madvise(MADV_PAGEOUT) on every file-backed mapping of this process.
pub fn page_out_file_mappings() -> SysResult<PageOutReport> {
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| {
        SysErr::new(
            "read",
            e.raw_os_error().unwrap_or(libc::EIO),
            "/proc/self/maps",
        )
    })?;
    let mut report = PageOutReport::default();
    for (start, end) in maps.lines().filter_map(file_backed_range) {
        // SAFETY: the range is one of this process's own mappings; MADV_PAGEOUT only drops
        // clean pages the kernel can read back, so no memory the process relies on changes.
        let ret =
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) };
        if ret == 0 {
            report.ranges += 1;
            report.bytes += (end - start) as u64;
        } else {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            if errno == libc::EINVAL || errno == libc::ENOMEM {
                report.refused += 1; // locked, special, or unmapped since the read
            } else {
                return Err(SysErr::new(
                    "madvise",
                    errno,
                    format!("MADV_PAGEOUT {start:#x}-{end:#x}"),
                ));
            }
        }
    }
    Ok(report)
}

pub mod js {
    use napi_derive::napi;

    /// What {@link pageOutFileMappings} advised.
    #[napi(object)]
    pub struct PageOutReportJs {
        pub ranges: u32,
        pub bytes: f64,
        pub refused: u32,
    }

    /// madvise(MADV_PAGEOUT) over this process's file-backed mappings (fast: no I/O).
    #[napi]
    pub fn page_out_file_mappings() -> napi::Result<PageOutReportJs> {
        super::page_out_file_mappings()
            .map(|r| PageOutReportJs {
                ranges: r.ranges,
                bytes: r.bytes as f64,
                refused: r.refused,
            })
            .map_err(napi::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_backed_lines_only() {
        let deno = "5581e2a00000-5581e7c00000 r-xp 02000000 00:1d 1234 /usr/bin/deno";
        assert_eq!(
            file_backed_range(deno),
            Some((0x5581e2a00000, 0x5581e7c00000))
        );
        for line in [
            "7ffd5e3a0000-7ffd5e3c1000 rw-p 00000000 00:00 0 [stack]",
            "7f0000000000-7f0000021000 rw-p 00000000 00:00 0",
            "7f1000000000-7f1000001000 rw-s 00000000 00:0e 12 anon_inode:[io_uring]",
            "garbage",
        ] {
            assert_eq!(file_backed_range(line), None, "{line}");
        }
    }

    #[test]
    fn pages_out_this_process() {
        let r = page_out_file_mappings().expect("MADV_PAGEOUT (Linux >= 5.4)");
        assert!(r.ranges > 0, "the test binary itself is file-backed: {r:?}");
        assert!(r.bytes > 0);
    }
}
