//! Thin wrappers over the syscalls machined-init makes: mount, finit_module,
//! loop devices, and the switch into the new root.

use std::ffi::CString;
use std::io::{Error, Result};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{chown, lchown, MetadataExt, PermissionsExt};

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL in paths")
}

fn check(rc: libc::c_int) -> Result<()> {
    if rc < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(())
    }
}

/// mount(2); an EBUSY (already mounted) counts as success.
pub fn mount(
    source: &str,
    target: &str,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> Result<()> {
    let _ = std::fs::create_dir_all(target);
    let (s, t, f, d) = (c(source), c(target), c(fstype), c(data));
    // SAFETY: valid NUL-terminated strings for the duration of the call.
    let rc = unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), flags, d.as_ptr().cast()) };
    match check(rc) {
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(()),
        r => r,
    }
}

/// Moves the mount at `from` to `to` (MS_MOVE).
pub fn move_mount(from: &str, to: &str) -> Result<()> {
    let (f, t) = (c(from), c(to));
    // SAFETY: valid strings; null fstype and data are allowed with MS_MOVE.
    check(unsafe {
        libc::mount(
            f.as_ptr(),
            t.as_ptr(),
            std::ptr::null(),
            libc::MS_MOVE,
            std::ptr::null(),
        )
    })
}

/// Unmounts `target`.
pub fn unmount(target: &str) -> Result<()> {
    let t = c(target);
    // SAFETY: valid string.
    check(unsafe { libc::umount2(t.as_ptr(), 0) })
}

/// Detaches the mount at `target` (MNT_DETACH).
pub fn detach(target: &str) -> Result<()> {
    let t = c(target);
    // SAFETY: valid string.
    check(unsafe { libc::umount2(t.as_ptr(), libc::MNT_DETACH) })
}

/// Loads the module file at `path`; an already loaded module is fine.
pub fn load_module(path: &str) -> Result<()> {
    let f = std::fs::File::open(path)?;
    let params = c("");
    // SAFETY: a valid fd and an empty parameter string.
    let rc = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), params.as_ptr(), 0) };
    match check(rc as libc::c_int) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        r => r,
    }
}

#[repr(C)]
struct LoopInfo64 {
    device: u64,
    inode: u64,
    rdevice: u64,
    offset: u64,
    sizelimit: u64,
    number: u32,
    encrypt_type: u32,
    encrypt_key_size: u32,
    flags: u32,
    file_name: [u8; 64],
    crypt_name: [u8; 64],
    encrypt_key: [u8; 32],
    init: [u64; 2],
}

#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LO_FLAGS_READ_ONLY: u32 = 1;
const LO_FLAGS_AUTOCLEAR: u32 = 4;

/// Attaches `file` (or the byte range `range` of it) read-only to a free loop device and returns the device's
/// path and an open handle. The device detaches itself when its last user
/// goes (autoclear), so the handle must stay open until the image is mounted.
pub fn attach_loop(file: &str, range: Option<(u64, u64)>) -> Result<(String, std::fs::File)> {
    let backing = std::fs::File::open(file)?;
    let ctl = std::fs::File::open("/dev/loop-control")?;
    // SAFETY: an ioctl without argument on the loop-control fd.
    let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE) };
    check(n)?;
    let path = format!("/dev/loop{n}");
    let dev = wait_open(&path)?;
    // SAFETY: LoopConfig is plain data; all-zero is a valid value.
    let mut cfg: LoopConfig = unsafe { std::mem::zeroed() };
    cfg.fd = backing.as_raw_fd() as u32;
    cfg.info.flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
    if let Some((offset, size)) = range {
        cfg.info.offset = offset;
        cfg.info.sizelimit = size;
    }
    // SAFETY: cfg outlives the call and has the kernel's layout.
    check(unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE, &cfg as *const LoopConfig) })?;
    Ok((path, dev))
}

fn wait_open(path: &str) -> Result<std::fs::File> {
    for _ in 0..100 {
        if let Ok(f) = std::fs::File::open(path) {
            return Ok(f);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::File::open(path)
}

/// Copies the tree `from` into `to` (files, directories, symlinks) keeping
/// modes and owners: a read-only image's seed for a fresh tmpfs.
pub fn copy_tree(from: &str, to: &str) -> Result<()> {
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let src = e.path();
        let dst = std::path::Path::new(to).join(e.file_name());
        let meta = std::fs::symlink_metadata(&src)?;
        let ft = meta.file_type();
        if ft.is_dir() {
            let _ = std::fs::create_dir(&dst);
            copy_tree(&src.to_string_lossy(), &dst.to_string_lossy())?;
        } else if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
            lchown(&dst, Some(meta.uid()), Some(meta.gid()))?;
            continue;
        } else {
            std::fs::copy(&src, &dst)?;
        }
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        chown(&dst, Some(meta.uid()), Some(meta.gid()))?;
    }
    Ok(())
}

/// Deletes everything on the file system of `dir` below it without crossing
/// into other mounts, as switch_root does, so the initramfs frees its RAM.
pub fn delete_same_fs(dir: &str, dev: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.dev() != dev {
            continue;
        }
        if meta.is_dir() {
            delete_same_fs(&path.to_string_lossy(), dev);
            let _ = std::fs::remove_dir(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Makes `new_root` the root: deletes the initramfs' files, moves the mount
/// over `/` and chroots into it (switch_root's steps).
pub fn switch_root(new_root: &str) -> Result<()> {
    for m in ["/dev", "/proc", "/sys"] {
        move_mount(m, &format!("{new_root}{m}"))?;
    }
    std::env::set_current_dir(new_root)?;
    let root_dev = std::fs::metadata("/")?.dev();
    delete_same_fs("/", root_dev);
    move_mount(".", "/")?;
    let dot = c(".");
    // SAFETY: a valid string.
    check(unsafe { libc::chroot(dot.as_ptr()) })?;
    std::env::set_current_dir("/")
}
