//! A sandboxed service's private mount namespace, set up in the child between
//! fork and exec: `read_only_paths` bound onto themselves read-only, then
//! `masked_paths` hidden (an empty read-only tmpfs over a directory,
//! /dev/null bound read-only over anything else, as OCI runtimes mask
//! paths). It runs before the bounding set is dropped and before the seccomp
//! filter (which refuses mount(2)), with machined's CAP_SYS_ADMIN. Only raw
//! syscalls: it runs after fork in a multi-threaded process.

use std::ffi::CString;

/// Which list a failing mount belonged to (errno is left set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    ReadOnly,
    Masked,
}

/// Unshare the mount namespace when either list has a path, stop mount
/// events flowing back to the host (`/` made recursively slave: the host's
/// new mounts still arrive), make each read-only path a read-only bind of
/// itself, and mask each masked path. A masked path that does not exist is
/// skipped: there is nothing to hide. Async-signal-safe.
///
/// # Safety
/// Call only in the forked child, with the paths built before fork.
pub unsafe fn private(read_only: &[CString], masked: &[CString]) -> Result<(), Step> {
    if read_only.is_empty() && masked.is_empty() {
        return Ok(());
    }
    let step = if read_only.is_empty() {
        Step::Masked
    } else {
        Step::ReadOnly
    };
    if libc::unshare(libc::CLONE_NEWNS) != 0 {
        return Err(step);
    }
    let none = std::ptr::null::<libc::c_char>();
    let slave = libc::MS_REC | libc::MS_SLAVE;
    if libc::mount(none, c"/".as_ptr(), none, slave, std::ptr::null()) != 0 {
        return Err(step);
    }
    for p in read_only {
        if !bind_read_only(p.as_ptr(), p.as_ptr()) {
            return Err(Step::ReadOnly);
        }
    }
    for p in masked {
        if !mask(p) {
            return Err(Step::Masked);
        }
    }
    Ok(())
}

unsafe fn bind_read_only(from: *const libc::c_char, to: *const libc::c_char) -> bool {
    let none = std::ptr::null::<libc::c_char>();
    if libc::mount(
        from,
        to,
        none,
        libc::MS_BIND | libc::MS_REC,
        std::ptr::null(),
    ) != 0
    {
        return false;
    }
    let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
    libc::mount(none, to, none, ro, std::ptr::null()) == 0
}

unsafe fn mask(p: &CString) -> bool {
    let mut st: libc::stat = std::mem::zeroed();
    if libc::stat(p.as_ptr(), &mut st) != 0 {
        return *libc::__errno_location() == libc::ENOENT;
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let data = c"size=4k,nr_inodes=1,mode=000";
        let fs = c"tmpfs".as_ptr();
        return libc::mount(fs, p.as_ptr(), fs, flags, data.as_ptr().cast()) == 0;
    }
    bind_read_only(c"/dev/null".as_ptr(), p.as_ptr())
}
