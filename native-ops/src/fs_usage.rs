//! How full a mounted filesystem is (statvfs(3)), for `machinectl mounts`.

use crate::error::SysResult;
use crate::util::{check, cstring};

/// Sizes in bytes of the filesystem mounted at a path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsUsage {
    pub size: u64,
    pub used: u64,
    /// Free to unprivileged users (excludes the reserved blocks).
    pub available: u64,
}

/// statvfs(3) of `target`, in bytes.
pub fn fs_usage(target: &str) -> SysResult<FsUsage> {
    let c_target = cstring("statvfs", target)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and a writable statvfs.
    let ret = unsafe { libc::statvfs(c_target.as_ptr(), &mut st) };
    check("statvfs", target, ret)?;
    let unit = st.f_frsize as u64;
    Ok(FsUsage {
        size: st.f_blocks as u64 * unit,
        used: (st.f_blocks as u64).saturating_sub(st.f_bfree as u64) * unit,
        available: st.f_bavail as u64 * unit,
    })
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// The size, use and free space of a filesystem, in bytes.
    #[napi(object)]
    pub struct FsUsageJs {
        pub size: f64,
        pub used: f64,
        pub available: f64,
    }

    /// statvfs(3) on a worker thread (a stale network mount may block).
    #[napi]
    pub async fn fs_usage(target: String) -> napi::Result<FsUsageJs> {
        blocking("statvfs", move || {
            super::fs_usage(&target).map(|u| FsUsageJs {
                size: u.size as f64,
                used: u.used as f64,
                available: u.available as f64,
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_a_size() {
        let u = fs_usage("/").unwrap();
        assert!(u.size > 0 && u.used <= u.size, "{u:?}");
    }

    #[test]
    fn missing_path_is_enoent() {
        assert_eq!(fs_usage("/nonexistent/x").unwrap_err().errno, libc::ENOENT);
    }
}
