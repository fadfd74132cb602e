//! Mount table changes: mount(2), umount2(2) with a lazy-detach fallback,
//! read-only remounts that keep the per-mount flags, and bind mounts. Reading
//! the table (/proc/self/mountinfo) is done in TypeScript.

use crate::error::{SysErr, SysResult};
use crate::util::{check, cstring, cstring_opt, opt_ptr};

/// Map mount flag names (as TypeScript spells them) to `MS_*` bits.
pub fn parse_flags(names: &[String]) -> SysResult<libc::c_ulong> {
    let mut bits: libc::c_ulong = 0;
    for name in names {
        bits |= match name.as_str() {
            "ro" | "rdonly" => libc::MS_RDONLY,
            "nosuid" => libc::MS_NOSUID,
            "nodev" => libc::MS_NODEV,
            "noexec" => libc::MS_NOEXEC,
            "sync" => libc::MS_SYNCHRONOUS,
            "remount" => libc::MS_REMOUNT,
            "dirsync" => libc::MS_DIRSYNC,
            "noatime" => libc::MS_NOATIME,
            "nodiratime" => libc::MS_NODIRATIME,
            "bind" => libc::MS_BIND,
            "move" => libc::MS_MOVE,
            "rec" => libc::MS_REC,
            "silent" => libc::MS_SILENT,
            "unbindable" => libc::MS_UNBINDABLE,
            "private" => libc::MS_PRIVATE,
            "slave" => libc::MS_SLAVE,
            "shared" => libc::MS_SHARED,
            "relatime" => libc::MS_RELATIME,
            "strictatime" => libc::MS_STRICTATIME,
            "lazytime" => libc::MS_LAZYTIME,
            other => {
                return Err(SysErr::new(
                    "mount",
                    libc::EINVAL,
                    format!("unknown flag {other:?}"),
                ))
            }
        };
    }
    Ok(bits)
}

/// mount(2). `source`, `fstype` and `data` may be absent (null pointers).
pub fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> SysResult<()> {
    let c_source = cstring_opt("mount", source)?;
    let c_target = cstring("mount", target)?;
    let c_fstype = cstring_opt("mount", fstype)?;
    let c_data = cstring_opt("mount", data)?;
    // SAFETY: every pointer is a valid NUL-terminated string or null.
    let ret = unsafe {
        libc::mount(
            opt_ptr(&c_source),
            c_target.as_ptr(),
            opt_ptr(&c_fstype),
            flags,
            opt_ptr(&c_data).cast(),
        )
    };
    check("mount", target, ret).map(|_| ())
}

/// How an unmount completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmounted {
    /// The filesystem was detached and released at once.
    Clean,
    /// It was busy, so it was lazily detached (MNT_DETACH); it goes away when unused.
    Detached,
}

/// umount2(2); when busy and `detach_fallback` is set, retry with MNT_DETACH.
pub fn unmount(target: &str, detach_fallback: bool) -> SysResult<Unmounted> {
    let c_target = cstring("umount2", target)?;
    // SAFETY: valid C string.
    let ret = unsafe { libc::umount2(c_target.as_ptr(), 0) };
    match check("umount2", target, ret) {
        Ok(_) => Ok(Unmounted::Clean),
        Err(e) if e.errno == libc::EBUSY && detach_fallback => {
            // SAFETY: valid C string.
            let ret = unsafe { libc::umount2(c_target.as_ptr(), libc::MNT_DETACH) };
            check("umount2", target, ret).map(|_| Unmounted::Detached)
        }
        Err(e) => Err(e),
    }
}

/// The per-mount flags currently applied at `target`, as `MS_*` bits, so a
/// remount does not silently drop nosuid/nodev/noexec or the atime mode.
pub fn current_mount_flags(target: &str) -> SysResult<libc::c_ulong> {
    let c_target = cstring("statvfs", target)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and a writable statvfs.
    let ret = unsafe { libc::statvfs(c_target.as_ptr(), &mut st) };
    check("statvfs", target, ret)?;
    let pairs: [(libc::c_ulong, libc::c_ulong); 7] = [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st_bit, _)| st.f_flag & st_bit != 0)
        .fold(0, |acc, (_, ms)| acc | ms))
}

/// Remount the filesystem at `target` read-only, keeping its per-mount flags.
/// With `bind_only`, only this mount point becomes read-only (MS_BIND), not
/// the superblock shared with other mounts.
pub fn remount_read_only(target: &str, bind_only: bool) -> SysResult<()> {
    let keep = current_mount_flags(target)?;
    let mut flags = keep | libc::MS_REMOUNT | libc::MS_RDONLY;
    if bind_only {
        flags |= libc::MS_BIND;
    }
    mount(None, target, None, flags, None)
}

/// Bind `source` onto `target` (recursively with `recursive`), then make the
/// new mount read-only when asked: a bind cannot be read-only in one call.
pub fn bind(source: &str, target: &str, recursive: bool, read_only: bool) -> SysResult<()> {
    let mut flags = libc::MS_BIND;
    if recursive {
        flags |= libc::MS_REC;
    }
    mount(Some(source), target, None, flags, None)?;
    if read_only {
        remount_read_only(target, true)?;
    }
    Ok(())
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// mount(2) with flag names such as `"nosuid"`, `"bind"`, `"rec"`, `"private"`.
    #[napi]
    pub async fn mount(
        source: Option<String>,
        target: String,
        fstype: Option<String>,
        flags: Vec<String>,
        data: Option<String>,
    ) -> napi::Result<()> {
        blocking("mount", move || {
            let bits = super::parse_flags(&flags)?;
            super::mount(
                source.as_deref(),
                &target,
                fstype.as_deref(),
                bits,
                data.as_deref(),
            )
        })
        .await
    }

    /// umount2(2); resolves `"clean"` or `"detached"` (busy, lazily detached).
    #[napi]
    pub async fn unmount(target: String, detach_fallback: bool) -> napi::Result<String> {
        blocking("umount2", move || {
            super::unmount(&target, detach_fallback).map(|u| match u {
                super::Unmounted::Clean => "clean".to_string(),
                super::Unmounted::Detached => "detached".to_string(),
            })
        })
        .await
    }

    /// Remount read-only, keeping nosuid/nodev/noexec/atime flags.
    #[napi]
    pub async fn remount_read_only(target: String, bind_only: bool) -> napi::Result<()> {
        blocking("mount", move || {
            super::remount_read_only(&target, bind_only)
        })
        .await
    }

    /// Bind mount, optionally recursive and read-only.
    #[napi]
    pub async fn bind_mount(
        source: String,
        target: String,
        recursive: bool,
        read_only: bool,
    ) -> napi::Result<()> {
        blocking("mount", move || {
            super::bind(&source, &target, recursive, read_only)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_map_to_bits() {
        let names = ["nosuid", "nodev", "bind", "rec"].map(String::from);
        assert_eq!(
            parse_flags(&names).unwrap(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_BIND | libc::MS_REC
        );
    }

    #[test]
    fn unknown_flag_is_einval() {
        let e = parse_flags(&["bogus".to_string()]).unwrap_err();
        assert_eq!(e.errno, libc::EINVAL);
    }

    #[test]
    fn mount_on_missing_dir_is_enoent() {
        let e = mount(Some("tmpfs"), "/nonexistent/mnt/x", Some("tmpfs"), 0, None).unwrap_err();
        // ENOENT as root; EPERM when unprivileged (permission is checked first).
        assert!(e.errno == libc::ENOENT || e.errno == libc::EPERM, "{e}");
        assert_eq!(e.op, "mount");
    }

    #[test]
    fn statvfs_reads_flags_of_root() {
        current_mount_flags("/").unwrap();
    }
}
