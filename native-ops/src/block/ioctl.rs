//! Block-device ioctls: geometry, read-only flag, partition-table re-read,
//! BLKPG partition add/delete/resize, and discard. Everything takes a path,
//! opens it with O_CLOEXEC for the one call and closes it again.

use crate::error::{SysErr, SysResult};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

// Linux ioctl numbers (asm-generic, as on x86_64 and aarch64).
pub const BLKROGET: libc::c_ulong = 0x125e;
pub const BLKRRPART: libc::c_ulong = 0x125f;
/// Write back and drop a block device's page cache.
pub const BLKFLSBUF: libc::c_ulong = 0x1261;
pub const BLKSSZGET: libc::c_ulong = 0x1268;
pub const BLKPG: libc::c_ulong = 0x1269;
pub const BLKDISCARD: libc::c_ulong = 0x1277;
pub const BLKPBSZGET: libc::c_ulong = 0x127b;
/// _IOR(0x12, 114, size_t) with an 8-byte size_t.
pub const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

pub const BLKPG_ADD_PARTITION: i32 = 1;
pub const BLKPG_DEL_PARTITION: i32 = 2;
pub const BLKPG_RESIZE_PARTITION: i32 = 3;

/// `struct blkpg_partition` (start and length in bytes).
#[repr(C)]
pub struct BlkpgPartition {
    pub start: i64,
    pub length: i64,
    pub pno: i32,
    pub devname: [u8; 64],
    pub volname: [u8; 64],
}

/// `struct blkpg_ioctl_arg`.
#[repr(C)]
pub struct BlkpgIoctlArg {
    pub op: i32,
    pub flags: i32,
    pub datalen: i32,
    pub data: *mut libc::c_void,
}

/// Size and sector sizes of a block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub size: u64,
    pub logical_sector_size: u32,
    pub physical_sector_size: u32,
    pub read_only: bool,
}

fn open(path: &str, flags: i32, op: &str) -> SysResult<OwnedFd> {
    let c = CString::new(path).map_err(|_| SysErr::new(op, libc::EINVAL, path))?;
    // SAFETY: c is a valid C string; the fd is owned immediately.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(SysErr::last(op, path));
    }
    // SAFETY: fresh fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ioctl_ptr<T>(
    fd: &OwnedFd,
    req: libc::c_ulong,
    arg: *mut T,
    op: &str,
    path: &str,
) -> SysResult<()> {
    // SAFETY: `arg` points to storage of the type the request expects.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if rc < 0 {
        return Err(SysErr::last(op, path));
    }
    Ok(())
}

/// BLKGETSIZE64 + BLKSSZGET + BLKPBSZGET + BLKROGET. A regular file is ENOTTY.
pub fn geometry(path: &str) -> SysResult<Geometry> {
    let fd = open(path, libc::O_RDONLY, "open")?;
    let mut size: u64 = 0;
    ioctl_ptr(&fd, BLKGETSIZE64, &mut size, "BLKGETSIZE64", path)?;
    let mut lss: libc::c_int = 0;
    ioctl_ptr(&fd, BLKSSZGET, &mut lss, "BLKSSZGET", path)?;
    let mut pss: libc::c_uint = 0;
    ioctl_ptr(&fd, BLKPBSZGET, &mut pss, "BLKPBSZGET", path)?;
    let mut ro: libc::c_int = 0;
    ioctl_ptr(&fd, BLKROGET, &mut ro, "BLKROGET", path)?;
    Ok(Geometry {
        size,
        logical_sector_size: lss as u32,
        physical_sector_size: pss,
        read_only: ro != 0,
    })
}

/// Ask the kernel to re-read the whole partition table. EBUSY when a
/// partition is in use (fall back to [`blkpg`] per partition).
pub fn reread_partitions(path: &str) -> SysResult<()> {
    let fd = open(path, libc::O_RDONLY, "open")?;
    // SAFETY: BLKRRPART takes no argument.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), BLKRRPART as _, 0) };
    if rc < 0 {
        return Err(SysErr::last("BLKRRPART", path));
    }
    Ok(())
}

/// BLKFLSBUF: write back and drop the device's page cache, so the next read
/// sees what was written through another device node (mkfs on a partition
/// while the whole disk stays open, as the root image's loop device keeps it).
pub fn flush_buffers(path: &str) -> SysResult<()> {
    let fd = open(path, libc::O_RDONLY, "open")?;
    // SAFETY: BLKFLSBUF takes no argument.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), BLKFLSBUF as _, 0) };
    if rc < 0 {
        return Err(SysErr::last("BLKFLSBUF", path));
    }
    Ok(())
}

/// Build the BLKPG partition argument.
pub fn blkpg_partition(number: u32, start: u64, length: u64) -> BlkpgPartition {
    BlkpgPartition {
        start: start as i64,
        length: length as i64,
        pno: number as i32,
        devname: [0; 64],
        volname: [0; 64],
    }
}

/// One BLKPG operation on partition `number` (bytes for start/length; the
/// kernel ignores them for delete). Add over an existing number or range is
/// EBUSY; delete of a mounted partition is EBUSY; of a missing one ENXIO.
pub fn blkpg(path: &str, op: i32, number: u32, start: u64, length: u64) -> SysResult<()> {
    let name = match op {
        BLKPG_ADD_PARTITION => "BLKPG_ADD_PARTITION",
        BLKPG_DEL_PARTITION => "BLKPG_DEL_PARTITION",
        BLKPG_RESIZE_PARTITION => "BLKPG_RESIZE_PARTITION",
        _ => return Err(SysErr::new("BLKPG", libc::EINVAL, format!("op {op}"))),
    };
    let fd = open(path, libc::O_RDONLY, "open")?;
    let mut part = blkpg_partition(number, start, length);
    let mut arg = BlkpgIoctlArg {
        op,
        flags: 0,
        datalen: std::mem::size_of::<BlkpgPartition>() as i32,
        data: &mut part as *mut BlkpgPartition as *mut libc::c_void,
    };
    ioctl_ptr(
        &fd,
        BLKPG,
        &mut arg,
        name,
        &format!("{path} partition {number}"),
    )
}

/// Discard (TRIM) `length` bytes at `offset`; both must be sector-aligned.
pub fn discard(path: &str, offset: u64, length: u64) -> SysResult<()> {
    let fd = open(path, libc::O_WRONLY, "open")?;
    let mut range = [offset, length];
    ioctl_ptr(&fd, BLKDISCARD, range.as_mut_ptr(), "BLKDISCARD", path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_kernel_encoding() {
        // _IO(type, nr) = type << 8 | nr; _IOR adds dir=2 << 30 and size << 16.
        let io = |nr: libc::c_ulong| (0x12 << 8) | nr;
        assert_eq!(BLKROGET, io(94));
        assert_eq!(BLKRRPART, io(95));
        assert_eq!(BLKSSZGET, io(104));
        assert_eq!(BLKPG, io(105));
        assert_eq!(BLKDISCARD, io(119));
        assert_eq!(BLKPBSZGET, io(123));
        assert_eq!(BLKGETSIZE64, (2 << 30) | (8 << 16) | io(114));
    }

    #[test]
    fn blkpg_structs_have_kernel_layout() {
        assert_eq!(
            std::mem::size_of::<BlkpgPartition>(),
            8 + 8 + 4 + 64 + 64 + 4
        );
        assert_eq!(std::mem::size_of::<BlkpgIoctlArg>(), 24);
    }

    #[test]
    fn regular_file_is_enotty_and_missing_is_enoent() {
        let dir = std::env::temp_dir().join(format!("blk-ioctl-{}", std::process::id()));
        std::fs::write(&dir, [0u8; 512]).unwrap();
        let p = dir.to_str().unwrap();
        let e = geometry(p).unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("BLKGETSIZE64", libc::ENOTTY));
        assert_eq!(reread_partitions(p).unwrap_err().errno, libc::ENOTTY);
        std::fs::remove_file(&dir).unwrap();
        let e = geometry("/nonexistent/disk").unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("open", libc::ENOENT));
    }
}
