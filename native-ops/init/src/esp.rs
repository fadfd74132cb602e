//! Finding the EFI System Partition: the GPT of every disk in /sys/block is
//! read and the partition whose type GUID is the ESP's
//! (C12A7328-F81F-11D2-BA4B-00A0C93EC93B) is matched to its device node
//! through /sys/block/<disk>/<part>/partition. With more than one disk
//! holding an ESP (a node installed from a USB stick that is still plugged
//! in), the one systemd-boot was loaded from wins: its unique partition GUID
//! is the EFI variable LoaderDevicePartUUID (read through efivarfs). Without
//! that variable, the first disk in name order.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// The ESP type GUID as stored on disk (mixed endian).
const ESP_TYPE: [u8; 16] = [
    0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11, 0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b,
];
const SECTOR: u64 = 512;

/// The ESP systemd-boot was loaded from, else the first disk's: the disk's
/// and the partition's names (`vda`, `vda1`).
pub fn find_esp() -> Option<(String, String)> {
    let mut disks: Vec<String> = std::fs::read_dir("/sys/block")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| !n.starts_with("loop") && !n.starts_with("ram"))
        .collect();
    disks.sort();
    let mut found = Vec::new();
    for disk in disks {
        let Some((number, guid)) = esp_partition(&format!("/dev/{disk}")) else {
            continue;
        };
        if let Some(part) = partition_device(&disk, number) {
            found.push((disk, part, guid));
        }
    }
    let loader = if found.len() > 1 {
        loader_partuuid()
    } else {
        None
    };
    pick(found, loader.as_deref())
}

/// The candidate whose partition GUID is `loader` (case-insensitive), else the first.
fn pick(found: Vec<(String, String, String)>, loader: Option<&str>) -> Option<(String, String)> {
    let at = loader
        .and_then(|l| found.iter().position(|(_, _, g)| g.eq_ignore_ascii_case(l)))
        .unwrap_or(0);
    found.into_iter().nth(at).map(|(d, p, _)| (d, p))
}

const EFIVARS: &str = "/sys/firmware/efi/efivars";
const LOADER_PARTUUID: &str = "LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

/// systemd-boot's LoaderDevicePartUUID: efivarfs is mounted for the read
/// (its module is in the initramfs); the variable is 4 attribute bytes and a
/// UTF-16LE GUID string.
fn loader_partuuid() -> Option<String> {
    let path = format!("{EFIVARS}/{LOADER_PARTUUID}");
    if std::fs::metadata(&path).is_err() {
        let _ = crate::sys::mount("efivarfs", EFIVARS, "efivarfs", libc::MS_RDONLY, "");
    }
    parse_efivar_string(&std::fs::read(path).ok()?)
}

/// The string of an efivarfs file holding a UTF-16LE, NUL-terminated string.
fn parse_efivar_string(raw: &[u8]) -> Option<String> {
    let units: Vec<u16> = raw
        .get(4..)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    String::from_utf16(&units).ok().filter(|s| !s.is_empty())
}

/// A GPT GUID (mixed endian on disk) as text, uppercase.
fn guid_text(b: &[u8]) -> String {
    format!(
        "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_le_bytes([b[4], b[5]]),
        u16::from_le_bytes([b[6], b[7]]),
        b[8],
        b[9],
        b[10],
        b[11],
        b[12],
        b[13],
        b[14],
        b[15]
    )
}

/// The 1-based number and the unique GUID of the ESP in the GPT of `device`.
fn esp_partition(device: &str) -> Option<(u32, String)> {
    let mut f = File::open(device).ok()?;
    let found = read_esp(&mut f);
    // Drop the disk's page cache: machined rewrites this GPT later (STATE,
    // EPHEMERAL) and must not read back the blocks cached here.
    // SAFETY: BLKFLSBUF takes no argument; the fd is open.
    unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&f), BLKFLSBUF) };
    found
}

/// BLKFLSBUF: flush (and drop) a block device's buffer cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;

fn read_esp(f: &mut File) -> Option<(u32, String)> {
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
        .map(|i| (i + 1, guid_text(&entries[i as usize * size + 16..][..16])))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_text_is_the_mixed_endian_guid() {
        // The ESP type GUID's own bytes spell C12A7328-F81F-11D2-BA4B-00A0C93EC93B.
        assert_eq!(guid_text(&ESP_TYPE), "C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
    }

    #[test]
    fn efivar_string_skips_attributes_and_stops_at_nul() {
        let mut raw = vec![7, 0, 0, 0];
        for u in "ab-12".encode_utf16().chain([0, 0x41]) {
            raw.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(parse_efivar_string(&raw).as_deref(), Some("ab-12"));
        assert_eq!(parse_efivar_string(&[7, 0, 0, 0]), None);
    }

    #[test]
    fn the_loaders_esp_wins_else_the_first() {
        let c = |d: &str, g: &str| (d.to_string(), format!("{d}1"), g.to_string());
        let found = || vec![c("vda", "AAAA"), c("vdb", "BBBB")];
        assert_eq!(
            pick(found(), Some("bbbb")),
            Some(("vdb".into(), "vdb1".into()))
        );
        assert_eq!(
            pick(found(), Some("CCCC")),
            Some(("vda".into(), "vda1".into()))
        );
        assert_eq!(pick(found(), None), Some(("vda".into(), "vda1".into())));
        assert_eq!(pick(vec![], None), None);
    }
}
