//! Finding the EFI System Partition: the GPT of every disk in /sys/block is
//! read and the partition whose type GUID is the ESP's
//! (C12A7328-F81F-11D2-BA4B-00A0C93EC93B) is matched to its device node
//! through /sys/block/<disk>/<part>/partition.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// The ESP type GUID as stored on disk (mixed endian).
const ESP_TYPE: [u8; 16] = [
    0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11, 0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b,
];
const SECTOR: u64 = 512;

/// The first disk's ESP: the disk's and the partition's names (`vda`, `vda1`).
pub fn find_esp() -> Option<(String, String)> {
    let mut disks: Vec<String> = std::fs::read_dir("/sys/block")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| !n.starts_with("loop") && !n.starts_with("ram"))
        .collect();
    disks.sort();
    for disk in disks {
        let Some(number) = esp_partition_number(&format!("/dev/{disk}")) else {
            continue;
        };
        if let Some(part) = partition_device(&disk, number) {
            return Some((disk, part));
        }
    }
    None
}

/// The 1-based number of the ESP in the GPT of `device`.
fn esp_partition_number(device: &str) -> Option<u32> {
    let mut f = File::open(device).ok()?;
    let found = read_esp_number(&mut f);
    // Drop the disk's page cache: machined rewrites this GPT later (STATE,
    // EPHEMERAL) and must not read back the blocks cached here.
    // SAFETY: BLKFLSBUF takes no argument; the fd is open.
    unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&f), BLKFLSBUF) };
    found
}

/// BLKFLSBUF: flush (and drop) a block device's buffer cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;

fn read_esp_number(f: &mut File) -> Option<u32> {
    let mut header = [0u8; 92];
    f.seek(SeekFrom::Start(SECTOR)).ok()?;
    f.read_exact(&mut header).ok()?;
    if &header[0..8] != b"EFI PART" {
        return None;
    }
    let array_lba = u64::from_le_bytes(header[72..80].try_into().ok()?);
    let count = u32::from_le_bytes(header[80..84].try_into().ok()?).min(1024);
    let size = u32::from_le_bytes(header[84..88].try_into().ok()?) as usize;
    if size < 128 {
        return None;
    }
    let mut entries = vec![0u8; size * count as usize];
    f.seek(SeekFrom::Start(array_lba * SECTOR)).ok()?;
    f.read_exact(&mut entries).ok()?;
    (0..count)
        .find(|&i| entries[i as usize * size..][..16] == ESP_TYPE)
        .map(|i| i + 1)
}

/// The name of `disk`'s partition number `number` (vda1, nvme0n1p1, ...).
fn partition_device(disk: &str, number: u32) -> Option<String> {
    for e in std::fs::read_dir(format!("/sys/block/{disk}"))
        .ok()?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let n = std::fs::read_to_string(e.path().join("partition")).ok();
        if n.map(|s| s.trim().parse::<u32>().ok()) == Some(Some(number)) {
            return Some(name);
        }
    }
    None
}

/// Where a file on the mounted ESP lies on the whole disk, when it is one
/// contiguous run (a file copied to a fresh FAT is): its byte offset on
/// `/dev/<disk>` and its size. A loop device over that range keeps no ESP
/// partition open, so machined can still re-read the disk's partition table
/// (BLKRRPART refuses while a partition is open). The root image's hash,
/// taken through the loop device, checks the mapping.
pub fn contiguous_extent(file: &str, disk: &str, part: &str) -> Option<(u64, u64)> {
    use std::os::fd::AsRawFd;
    const FIBMAP: libc::c_ulong = 1;
    const FIGETBSZ: libc::c_ulong = 2;
    let f = File::open(file).ok()?;
    let size = f.metadata().ok()?.len();
    let mut bsz: libc::c_int = 0;
    // SAFETY: FIGETBSZ writes one int.
    if unsafe { libc::ioctl(f.as_raw_fd(), FIGETBSZ, &mut bsz) } < 0 || bsz <= 0 || size == 0 {
        return None;
    }
    let blocks = size.div_ceil(bsz as u64);
    let map = |logical: u64| -> Option<u64> {
        let mut b = logical as libc::c_int;
        // SAFETY: FIBMAP reads and writes one int.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), FIBMAP, &mut b) };
        (rc >= 0 && b > 0).then_some(b as u64)
    };
    let first = map(0)?;
    // Every 256th block and the last in order: a fragmented file falls back
    // to a file-backed loop (and the hash checks the blocks in between).
    for i in (256..blocks)
        .step_by(256)
        .chain(std::iter::once(blocks - 1))
    {
        if map(i)? != first + i {
            return None;
        }
    }
    let start: u64 = std::fs::read_to_string(format!("/sys/block/{disk}/{part}/start"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some((start * SECTOR + first * bsz as u64, size))
}
