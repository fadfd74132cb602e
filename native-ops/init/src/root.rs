//! Mounting the slot's read-only root image: load the initramfs' modules,
//! find the ESP, attach `/<slot>/root.img` to a loop device, map it through
//! dm-verity when the loader entry names its tree (dm.rs; the kernel checks
//! blocks as they are read) or else check the whole file's SHA-256 against
//! the loader entry's, mount it read-only, give it its
//! writable places (tmpfs /run, /tmp, /var, seeded from the image), mount
//! its system extensions (extensions.rs), then switch into it, freeing the
//! initramfs.

use crate::bootargs::RootArgs;
use crate::{console, sha256::Sha256, sys, uptime};
use std::io::Read;
use std::time::{Duration, Instant};

/// The modules that reach the root image, one absolute path per line, in load order.
const MODULES_LIST: &str = "/etc/machined/initramfs-modules";
const ESP_MOUNT: &str = "/esp";
const NEW_ROOT: &str = "/newroot";
/// In the image: trees copied into the fresh tmpfs of the same name (`run`, `var`).
const SEED: &str = "/usr/lib/machined/seed";
const ESP_WAIT: Duration = Duration::from_secs(30);

/// Every step up to the switch; an error names the step and is fatal.
pub fn mount_root(args: &RootArgs) -> Result<(), String> {
    let t0 = Instant::now();
    load_modules()?;
    let (disk, part) = wait_for_esp()?;
    mount_esp(&format!("/dev/{part}"))?;
    crate::trial::consume(ESP_MOUNT, &args.slot);
    let image = format!("{ESP_MOUNT}/{}/root.img", args.slot);
    let (loopdev, _hold, source) = attach_image(&image, &disk, &part)?;
    let t_hash = Instant::now();
    let (dev, how) = match &args.verity {
        Some(v) => {
            let dev = crate::dm::create_verity(&loopdev, v)
                .map_err(|e| format!("dm-verity over {loopdev}: {e}"))?;
            (dev, format!("dm-verity {}", &v.root_hash[..12]))
        }
        None => {
            verify(&loopdev, &image, &args.sha256)?;
            (loopdev.clone(), format!("sha256 {}", &args.sha256[..12]))
        }
    };
    let hashed = t_hash.elapsed();
    mount_image(&dev, &args.fstype)?;
    writable_places()?;
    crate::stub_extra::carry_into(NEW_ROOT);
    crate::extensions::mount_all(NEW_ROOT);
    console(&format!(
        "machined-init: root {image} ({}, {source}) verified {how} in {:.2}s, mounted read-only in {:.2}s{}",
        args.fstype,
        hashed.as_secs_f64(),
        t0.elapsed().as_secs_f64(),
        uptime::field(uptime::now())
    ));
    sys::switch_root(NEW_ROOT).map_err(|e| format!("switch to {NEW_ROOT}: {e}"))
}

fn load_modules() -> Result<(), String> {
    let list = std::fs::read_to_string(MODULES_LIST).unwrap_or_default();
    for path in list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        sys::load_module(path).map_err(|e| format!("load module {path}: {e}"))?;
    }
    Ok(())
}

/// Attaches the image to a loop device: over its contiguous range of the
/// whole disk when it has one (then the ESP is unmounted and no partition
/// stays open), else over the file (then the ESP stays mounted, detached).
fn attach_image(
    image: &str,
    disk: &str,
    part: &str,
) -> Result<(String, std::fs::File, String), String> {
    if let Some(range) = crate::esp::contiguous_extent(image, disk, part) {
        let dev = format!("/dev/{disk}");
        let (l, hold) = sys::attach_loop(&dev, Some(range))
            .map_err(|e| format!("attach {dev} at {} to a loop device: {e}", range.0))?;
        sys::unmount(ESP_MOUNT).map_err(|e| format!("unmount the ESP: {e}"))?;
        return Ok((l, hold, format!("{dev} at byte {}", range.0)));
    }
    let (l, hold) = sys::attach_loop(image, None)
        .map_err(|e| format!("attach {image} to a loop device: {e}"))?;
    // The loop device holds the file open; the ESP mount can go from the tree.
    let _ = sys::detach(ESP_MOUNT);
    Ok((l, hold, "file-backed".to_string()))
}

fn wait_for_esp() -> Result<(String, String), String> {
    let start = Instant::now();
    loop {
        if let Some(dev) = crate::esp::find_esp() {
            return Ok(dev);
        }
        if start.elapsed() > ESP_WAIT {
            return Err(format!(
                "no disk with an EFI System Partition after {ESP_WAIT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mount_esp(dev: &str) -> Result<(), String> {
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    sys::mount(dev, ESP_MOUNT, "vfat", flags, "codepage=437,iocharset=utf8")
        .map_err(|e| format!("mount the ESP {dev} on {ESP_MOUNT}: {e}"))
}

/// Hashes the image through the loop device it is mounted from (so the bytes
/// checked are the bytes mounted), refusing a mismatch.
fn verify(loopdev: &str, image: &str, expected: &str) -> Result<(), String> {
    let mut f = std::fs::File::open(loopdev).map_err(|e| format!("open {loopdev}: {e}"))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("read {loopdev}: {e}"))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let got = h.hex();
    if got != expected {
        return Err(format!(
            "ROOT IMAGE MISMATCH: {image} has sha256 {got}, the loader entry expects {expected}; refusing to boot it"
        ));
    }
    Ok(())
}

fn mount_image(loopdev: &str, fstype: &str) -> Result<(), String> {
    sys::mount(
        loopdev,
        NEW_ROOT,
        fstype,
        libc::MS_RDONLY | libc::MS_NODEV,
        "",
    )
    .map_err(|e| format!("mount {loopdev} ({fstype}) read-only on {NEW_ROOT}: {e}"))
}

/// tmpfs on /run, /tmp and /var (EPHEMERAL later mounts over /var), each
/// seeded from the image's seed tree when it has one.
fn writable_places() -> Result<(), String> {
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    for (dir, mode) in [("run", "0755"), ("tmp", "1777"), ("var", "0755")] {
        let target = format!("{NEW_ROOT}/{dir}");
        sys::mount(
            "tmpfs",
            &target,
            "tmpfs",
            nosuid_nodev,
            &format!("mode={mode}"),
        )
        .map_err(|e| format!("mount tmpfs on /{dir}: {e}"))?;
        let seed = format!("{NEW_ROOT}{SEED}/{dir}");
        if std::path::Path::new(&seed).is_dir() {
            sys::copy_tree(&seed, &target)
                .map_err(|e| format!("seed /{dir} from {SEED}/{dir}: {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::verify;

    #[test]
    fn a_root_image_that_does_not_match_its_hash_is_refused() {
        let path =
            std::env::temp_dir().join(format!("machined-init-verify-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        let p = path.to_string_lossy();
        let good = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert!(verify(&p, "/esp/A/root.img", good).is_ok());
        let bad = "00".repeat(32);
        let err = verify(&p, "/esp/A/root.img", &bad).unwrap_err();
        assert!(err.contains("ROOT IMAGE MISMATCH"), "{err}");
        assert!(
            err.contains(good) && err.contains("refusing to boot"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
