//! A read-only dm-verity device over the root image's loop device, made
//! through the device-mapper ioctls on /dev/mapper/control (no libdevmapper,
//! no udev): DM_DEV_CREATE, DM_TABLE_LOAD with one `verity` target, then
//! DM_DEV_SUSPEND without the suspend flag, which resumes it. The kernel then
//! checks each 4 KiB block against the hash tree as it is first read; a
//! corrupted block fails its read with EIO (no `*_on_corruption` argument:
//! see docs/decisions.md "The root image is verified by dm-verity").

use crate::bootargs::Verity;
use std::io::{Error, Result};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

const CONTROL: &str = "/dev/mapper/control";
/// The device's name (what `dmsetup ls` would show).
pub const NAME: &str = "machined-root";
const NAME_LEN: usize = 128;
const UUID_LEN: usize = 129;
const TYPE_NAME_LEN: usize = 16;
const DM_READONLY_FLAG: u32 = 1 << 0;
/// The interface version asked for: 4.0.0 (the kernel accepts any minor up to its own).
const VERSION: [u32; 3] = [4, 0, 0];

/// `struct dm_ioctl` of <linux/dm-ioctl.h>.
#[repr(C)]
#[derive(Clone, Copy)]
struct DmIoctl {
    version: [u32; 3],
    data_size: u32,
    data_start: u32,
    target_count: u32,
    open_count: i32,
    flags: u32,
    event_nr: u32,
    padding: u32,
    dev: u64,
    name: [u8; NAME_LEN],
    uuid: [u8; UUID_LEN],
    data: [u8; 7],
}

/// `struct dm_target_spec`; its parameters string follows it.
#[repr(C)]
#[derive(Clone, Copy)]
struct DmTargetSpec {
    sector_start: u64,
    length: u64,
    status: i32,
    next: u32,
    target_type: [u8; TYPE_NAME_LEN],
}

/// `_IOWR(0xfd, nr, struct dm_ioctl)`: the same encoding on x86_64 and arm64.
const fn iowr(nr: u32) -> u32 {
    (3 << 30) | ((std::mem::size_of::<DmIoctl>() as u32) << 16) | (0xfd << 8) | nr
}
const DM_DEV_CREATE: u32 = iowr(3);
const DM_DEV_SUSPEND: u32 = iowr(6);
const DM_TABLE_LOAD: u32 = iowr(9);

fn header(data_size: usize) -> DmIoctl {
    let mut h = DmIoctl {
        version: VERSION,
        data_size: data_size as u32,
        data_start: std::mem::size_of::<DmIoctl>() as u32,
        target_count: 0,
        open_count: 0,
        flags: 0,
        event_nr: 0,
        padding: 0,
        dev: 0,
        name: [0; NAME_LEN],
        uuid: [0; UUID_LEN],
        data: [0; 7],
    };
    h.name[..NAME.len()].copy_from_slice(NAME.as_bytes());
    h
}

/// The `verity` target's parameters: format 1, the tree after the data in the same device.
pub fn verity_params(dev: &str, v: &Verity) -> String {
    format!(
        "1 {dev} {dev} 4096 4096 {blocks} {blocks} sha256 {root} {salt}",
        blocks = v.data_blocks,
        root = v.root_hash,
        salt = v.salt
    )
}

/// The DM_TABLE_LOAD buffer: header, one target spec over `sectors`, its parameters. Pure.
fn table_buffer(sectors: u64, params: &str) -> Vec<u8> {
    let head = std::mem::size_of::<DmIoctl>();
    let spec = std::mem::size_of::<DmTargetSpec>();
    let total = (head + spec + params.len() + 1).div_ceil(8) * 8;
    let mut h = header(total);
    h.target_count = 1;
    h.flags = DM_READONLY_FLAG;
    let mut t = DmTargetSpec {
        sector_start: 0,
        length: sectors,
        status: 0,
        next: (total - head) as u32,
        target_type: [0; TYPE_NAME_LEN],
    };
    t.target_type[..6].copy_from_slice(b"verity");
    let mut buf = vec![0u8; total];
    // SAFETY: both structs are plain repr(C) data, copied byte for byte into a buffer big enough.
    unsafe {
        std::ptr::copy_nonoverlapping((&h as *const DmIoctl).cast::<u8>(), buf.as_mut_ptr(), head);
        std::ptr::copy_nonoverlapping(
            (&t as *const DmTargetSpec).cast::<u8>(),
            buf.as_mut_ptr().add(head),
            spec,
        );
    }
    buf[head + spec..head + spec + params.len()].copy_from_slice(params.as_bytes());
    buf
}

fn ioctl(fd: &std::fs::File, req: u32, buf: &mut [u8], what: &str) -> Result<()> {
    // SAFETY: buf starts with a dm_ioctl whose data_size is buf's length.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, buf.as_mut_ptr()) };
    if rc < 0 {
        let e = Error::last_os_error();
        return Err(Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

fn bare(flags: u32) -> Vec<u8> {
    let mut h = header(std::mem::size_of::<DmIoctl>());
    h.flags = flags;
    // SAFETY: plain repr(C) data read as bytes.
    unsafe {
        std::slice::from_raw_parts(
            (&h as *const DmIoctl).cast::<u8>(),
            std::mem::size_of::<DmIoctl>(),
        )
    }
    .to_vec()
}

/// Creates, loads and resumes the verity device over `lower` (a block device
/// holding the data then the tree); returns its node, `/dev/dm-<minor>`.
pub fn create_verity(lower: &str, v: &Verity) -> Result<String> {
    let rdev = std::fs::metadata(lower)?.rdev();
    let dev = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let control = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(CONTROL)?;
    let mut create = bare(0);
    ioctl(&control, DM_DEV_CREATE, &mut create, "DM_DEV_CREATE")?;
    // SAFETY: the kernel wrote a dm_ioctl back into the buffer.
    let created: DmIoctl = unsafe { std::ptr::read_unaligned(create.as_ptr().cast()) };
    let mut table = table_buffer(v.data_blocks * 8, &verity_params(&dev, v));
    ioctl(
        &control,
        DM_TABLE_LOAD,
        &mut table,
        "DM_TABLE_LOAD (verity)",
    )?;
    let mut resume = bare(0);
    ioctl(
        &control,
        DM_DEV_SUSPEND,
        &mut resume,
        "DM_DEV_SUSPEND (resume)",
    )?;
    // The kernel's huge_encode_dev: minor's low byte, then the major, then the minor's rest.
    let minor = (created.dev & 0xff) | ((created.dev >> 12) & !0xff);
    let node = format!("/dev/dm-{minor}");
    wait_for(&node)?;
    Ok(node)
}

/// devtmpfs adds the node as the disk is added; give it a moment.
fn wait_for(node: &str) -> Result<()> {
    let start = Instant::now();
    while !std::path::Path::new(node).exists() {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(Error::other(format!("{node} did not appear")));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn structs_match_the_kernel_header() {
        assert_eq!(size_of::<DmIoctl>(), 312);
        assert_eq!(offset_of!(DmIoctl, data_size), 12);
        assert_eq!(offset_of!(DmIoctl, flags), 28);
        assert_eq!(offset_of!(DmIoctl, dev), 40);
        assert_eq!(offset_of!(DmIoctl, name), 48);
        assert_eq!(offset_of!(DmIoctl, uuid), 176);
        assert_eq!(offset_of!(DmIoctl, data), 305);
        assert_eq!(size_of::<DmTargetSpec>(), 40);
        assert_eq!(offset_of!(DmTargetSpec, next), 20);
        assert_eq!(offset_of!(DmTargetSpec, target_type), 24);
    }

    #[test]
    fn ioctl_numbers_are_iowr_0xfd() {
        assert_eq!(DM_DEV_CREATE, 0xc138_fd03);
        assert_eq!(DM_DEV_SUSPEND, 0xc138_fd06);
        assert_eq!(DM_TABLE_LOAD, 0xc138_fd09);
    }

    #[test]
    fn table_buffer_holds_one_verity_target_then_its_parameters() {
        let v = Verity {
            root_hash: "ab".repeat(32),
            salt: "cd".repeat(32),
            data_blocks: 10,
        };
        let p = verity_params("7:0", &v);
        assert_eq!(
            p,
            format!(
                "1 7:0 7:0 4096 4096 10 10 sha256 {} {}",
                "ab".repeat(32),
                "cd".repeat(32)
            )
        );
        let b = table_buffer(80, &p);
        assert_eq!(b.len() % 8, 0);
        assert_eq!(
            u32::from_ne_bytes(b[12..16].try_into().unwrap()) as usize,
            b.len()
        );
        assert_eq!(u32::from_ne_bytes(b[16..20].try_into().unwrap()), 312);
        assert_eq!(u32::from_ne_bytes(b[20..24].try_into().unwrap()), 1);
        assert_eq!(&b[48..48 + NAME.len()], NAME.as_bytes());
        assert_eq!(u64::from_ne_bytes(b[320..328].try_into().unwrap()), 80);
        assert_eq!(&b[336..342], b"verity");
        assert_eq!(&b[352..352 + p.len()], p.as_bytes());
        assert_eq!(b[352 + p.len()], 0);
    }
}
