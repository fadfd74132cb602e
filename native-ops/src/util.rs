//! Small helpers shared by the domain modules: C strings that refuse interior
//! NULs, libc return-value checks that capture errno, and the bridge that runs
//! a blocking closure on the napi Tokio blocking pool and hands back a Promise.

use std::ffi::CString;

use crate::error::{SysErr, SysResult};

/// A C string for a syscall argument; an interior NUL is `EINVAL`, not a panic.
pub fn cstring(op: &str, value: &str) -> SysResult<CString> {
    CString::new(value).map_err(|_| SysErr::new(op, libc::EINVAL, format!("NUL byte in {value:?}")))
}

/// An optional C string (a `None` becomes a null pointer at the call site).
pub fn cstring_opt(op: &str, value: Option<&str>) -> SysResult<Option<CString>> {
    value.map(|v| cstring(op, v)).transpose()
}

/// The pointer for an optional C string: null when absent.
pub fn opt_ptr(value: &Option<CString>) -> *const libc::c_char {
    value.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

/// Turn a libc `-1` return into a [`SysErr`] carrying errno.
pub fn check(op: &str, detail: &str, ret: libc::c_int) -> SysResult<libc::c_int> {
    if ret == -1 {
        Err(SysErr::last(op, detail))
    } else {
        Ok(ret)
    }
}

/// Like [`check`] for the `long` that `libc::syscall` returns.
pub fn check_long(op: &str, detail: &str, ret: libc::c_long) -> SysResult<libc::c_long> {
    if ret == -1 {
        Err(SysErr::last(op, detail))
    } else {
        Ok(ret)
    }
}

/// Run `f` off the JavaScript thread and resolve with its result. A panic in
/// `f` (a bug) becomes an `EIO` error instead of unwinding across the FFI.
pub async fn blocking<T, F>(op: &'static str, f: F) -> napi::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> SysResult<T> + Send + 'static,
{
    match napi::bindgen_prelude::spawn_blocking(f).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(SysErr::new(op, libc::EIO, format!("worker failed: {e}")).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_nul_is_einval() {
        let e = cstring("mount", "a\0b").unwrap_err();
        assert_eq!(e.errno, libc::EINVAL);
        assert_eq!(e.op, "mount");
    }

    #[test]
    fn check_captures_errno() {
        let path = cstring("t", "/nonexistent/definitely").unwrap();
        let ret = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
        let e = check("open", "/nonexistent/definitely", ret).unwrap_err();
        assert_eq!(e.errno, libc::ENOENT);
    }
}
