//! A sandboxed service's private mount namespace: `read_only_paths` bound
//! onto themselves read-only, in the child between fork and exec. It runs
//! before the bounding set is dropped and before the seccomp filter (which
//! refuses mount(2)), with machined's CAP_SYS_ADMIN. Only raw syscalls:
//! it runs after fork in a multi-threaded process.

use std::ffi::CString;

/// Unshare the mount namespace, stop mount events flowing back to the host
/// (`/` made recursively slave: the host's new mounts still arrive), and
/// make each path a read-only bind of itself. Async-signal-safe; returns the
/// failing call's name on error (errno is left set).
///
/// # Safety
/// Call only in the forked child, with `paths` built before fork.
pub unsafe fn read_only(paths: &[CString]) -> Result<(), &'static str> {
    if paths.is_empty() {
        return Ok(());
    }
    if libc::unshare(libc::CLONE_NEWNS) != 0 {
        return Err("unshare");
    }
    let none = std::ptr::null::<libc::c_char>();
    if libc::mount(
        none,
        c"/".as_ptr(),
        none,
        libc::MS_REC | libc::MS_SLAVE,
        std::ptr::null(),
    ) != 0
    {
        return Err("mount");
    }
    for p in paths {
        let flags = libc::MS_BIND | libc::MS_REC;
        if libc::mount(p.as_ptr(), p.as_ptr(), none, flags, std::ptr::null()) != 0 {
            return Err("mount");
        }
        let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
        if libc::mount(none, p.as_ptr(), none, ro, std::ptr::null()) != 0 {
            return Err("mount");
        }
    }
    Ok(())
}
