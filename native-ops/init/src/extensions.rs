//! The slot's system extensions: squashfs files the imager put inside the
//! root image (`/usr/lib/machined/extensions/<name>.squashfs`), listed with
//! their version, size and SHA-256 in the image's index. The root image is
//! verified (dm-verity or its whole hash), so the index is as trusted as the
//! slot; each extension is hashed again through the loop device it is
//! mounted from and mounted read-only, nosuid and nodev on
//! `/opt/extensions/<name>`, before machined starts. An extension that
//! fails (a hash that differs, a read error, a mount error) is refused and
//! written down with its reason; the node boots without it. The outcome goes
//! to `/run/machined/extensions` for machined's ExtensionStatus (one line per
//! extension: name, version, sha256, `mounted` or `refused`, the reason).

use crate::{console, sha256::Sha256, sys};
use std::io::Read;

/// The index in the root image, relative to the new root.
pub const INDEX: &str = "/usr/lib/machined/extensions/index";
const FILES: &str = "/usr/lib/machined/extensions";
const MOUNTS: &str = "/opt/extensions";
/// Where the outcome is written, relative to the new root (a tmpfs by then).
pub const OUTCOME: &str = "/run/machined/extensions";
/// More lines than this in the index are refused as a whole (the imager caps at 16).
const MAX_EXTENSIONS: usize = 16;

/// One line of the index.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub version: String,
    pub sha256: String,
    pub size: u64,
}

/// Parses the index: `name version sha256 size` per line, `#` comments.
/// Names are `[a-z0-9][a-z0-9_-]*` up to 32 bytes (they become paths).
pub fn parse_index(text: &str) -> Result<Vec<Entry>, String> {
    let mut out: Vec<Entry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        let bad = |why: &str| format!("extension index line {}: {why}", i + 1);
        if f.len() != 4 {
            return Err(bad("expected name, version, sha256 and size"));
        }
        if !valid_name(f[0]) {
            return Err(bad(&format!("bad name {:?}", f[0])));
        }
        if f[2].len() != 64
            || !f[2]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return Err(bad("sha256 is not 64 lowercase hex digits"));
        }
        let size = f[3]
            .parse::<u64>()
            .map_err(|_| bad("size is not a number"))?;
        if out.iter().any(|e| e.name == f[0]) {
            return Err(bad(&format!("{:?} listed twice", f[0])));
        }
        out.push(Entry {
            name: f[0].to_string(),
            version: f[1].to_string(),
            sha256: f[2].to_string(),
            size,
        });
        if out.len() > MAX_EXTENSIONS {
            return Err(format!(
                "more than {MAX_EXTENSIONS} extensions in the index"
            ));
        }
    }
    Ok(out)
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 32
        && n.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Hashes `path` (the loop device, so the bytes checked are the bytes
/// mounted) and compares with the index: `Err` names both hashes.
pub fn check(path: &str, e: &Entry) -> Result<(), String> {
    let mut f = std::fs::File::open(path).map_err(|err| format!("open {path}: {err}"))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|err| format!("read {path}: {err}"))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    let got = h.hex();
    if got != e.sha256 || size != e.size {
        return Err(format!(
            "hash mismatch: {size} bytes sha256 {got}, the signed index says {} bytes sha256 {}",
            e.size, e.sha256
        ));
    }
    Ok(())
}

/// Verifies and mounts every extension under `root`, writing the outcome.
/// Never fails the boot: a missing index means no extensions.
pub fn mount_all(root: &str) {
    let text = match std::fs::read_to_string(format!("{root}{INDEX}")) {
        Ok(t) => t,
        Err(_) => return,
    };
    let lines = match parse_index(&text) {
        Ok(entries) => entries
            .iter()
            .map(|e| outcome_line(e, mount_one(root, e)))
            .collect::<Vec<_>>(),
        Err(why) => {
            console(&format!("machined-init: extensions refused: {why}"));
            vec![format!("- - - refused {why}")]
        }
    };
    let out = format!("{root}{OUTCOME}");
    let _ = std::fs::create_dir_all(format!("{root}/run/machined"));
    if let Err(e) = std::fs::write(&out, lines.join("\n") + "\n") {
        console(&format!("machined-init: write {out}: {e}"));
    }
}

fn mount_one(root: &str, e: &Entry) -> Result<(), String> {
    let file = format!("{root}{FILES}/{}.squashfs", e.name);
    let (loopdev, _hold) =
        sys::attach_loop(&file, None).map_err(|err| format!("attach {file}: {err}"))?;
    check(&loopdev, e)?;
    let target = format!("{root}{MOUNTS}/{}", e.name);
    let flags = libc::MS_RDONLY | libc::MS_NODEV | libc::MS_NOSUID;
    sys::mount(&loopdev, &target, "squashfs", flags, "")
        .map_err(|err| format!("mount {loopdev} on {MOUNTS}/{}: {err}", e.name))?;
    console(&format!(
        "machined-init: extension {} {} verified sha256 {}, mounted read-only on {MOUNTS}/{}",
        e.name,
        e.version,
        &e.sha256[..12],
        e.name
    ));
    Ok(())
}

/// One outcome line; the reason has no line breaks.
pub fn outcome_line(e: &Entry, r: Result<(), String>) -> String {
    match r {
        Ok(()) => format!("{} {} {} mounted", e.name, e.version, e.sha256),
        Err(why) => {
            console(&format!(
                "machined-init: EXTENSION REFUSED: {} {}: {why}; booting without it",
                e.name, e.version
            ));
            let why = why.replace(['\n', '\r'], " ");
            format!("{} {} {} refused {why}", e.name, e.version, e.sha256)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn the_index_is_parsed_and_bad_lines_refused() {
        let ok = parse_index(&format!("# x\nhello 1.0 {ABC} 3\n\n")).unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].name, "hello");
        assert_eq!(ok[0].size, 3);
        for bad in [
            format!("../x 1 {ABC} 3"),
            format!("Hello 1 {ABC} 3"),
            format!("a 1 {} 3", ABC.to_uppercase()),
            format!("a 1 {ABC}"),
            format!("a 1 {ABC} x"),
            format!("a 1 {ABC} 3\na 2 {ABC} 3"),
        ] {
            assert!(parse_index(&bad).is_err(), "{bad}");
        }
        let many: String = (0..17).map(|i| format!("e{i} 1 {ABC} 3\n")).collect();
        assert!(parse_index(&many).unwrap_err().contains("more than 16"));
    }

    #[test]
    fn an_extension_whose_bytes_differ_is_refused() {
        let path = std::env::temp_dir().join(format!("machined-init-ext-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        let p = path.to_string_lossy();
        let mut e = Entry {
            name: "a".into(),
            version: "1".into(),
            sha256: ABC.into(),
            size: 3,
        };
        assert!(check(&p, &e).is_ok());
        e.sha256 = "00".repeat(32);
        let err = check(&p, &e).unwrap_err();
        assert!(err.contains("hash mismatch") && err.contains(ABC), "{err}");
        e.sha256 = ABC.into();
        e.size = 4;
        assert!(check(&p, &e).is_err());
        std::fs::remove_file(&path).unwrap();
        let line = outcome_line(&e, Err("x\ny".into()));
        assert_eq!(line, format!("a 1 {ABC} refused x y"));
        assert_eq!(outcome_line(&e, Ok(())), format!("a 1 {ABC} mounted"));
    }

    /// As root with loop devices and mksquashfs (extensions_root_test.ts runs it in the root tier).
    #[test]
    #[ignore = "needs root, loop devices and mksquashfs: native-ops/init/extensions_root_test.ts"]
    fn mounts_a_matching_extension_read_only_and_refuses_a_mismatch() {
        let dir = std::env::temp_dir().join(format!("machined-init-mount-{}", std::process::id()));
        let root = dir.join("root");
        let tree = dir.join("tree");
        for d in [
            "usr/lib/machined/extensions",
            "opt/extensions/good",
            "opt/extensions/bad",
            "run",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(tree.join("bin")).unwrap();
        std::fs::write(tree.join("bin/hello"), b"hello").unwrap();
        let image = dir.join("e.squashfs");
        let ok = std::process::Command::new("mksquashfs")
            .args([tree.as_os_str(), image.as_os_str()])
            .args(["-noappend", "-quiet", "-no-progress"])
            .status()
            .unwrap();
        assert!(ok.success());
        let files = root.join("usr/lib/machined/extensions");
        std::fs::copy(&image, files.join("good.squashfs")).unwrap();
        std::fs::copy(&image, files.join("bad.squashfs")).unwrap();
        let bytes = std::fs::read(&image).unwrap();
        let mut h = Sha256::new();
        h.update(&bytes);
        let sha = h.hex();
        let n = bytes.len();
        let wrong = "00".repeat(32);
        std::fs::write(
            files.join("index"),
            format!("good 1.0 {sha} {n}\nbad 2.0 {wrong} {n}\n"),
        )
        .unwrap();
        let r = root.to_string_lossy().to_string();
        mount_all(&r);
        let outcome = std::fs::read_to_string(root.join("run/machined/extensions")).unwrap();
        let good = root.join("opt/extensions/good");
        let read = std::fs::read(good.join("bin/hello"));
        let write = std::fs::write(good.join("x"), b"x");
        let _ = sys::unmount(&good.to_string_lossy());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            outcome.contains(&format!("good 1.0 {sha} mounted")),
            "{outcome}"
        );
        assert!(
            outcome.contains(&format!("bad 2.0 {wrong} refused hash mismatch")),
            "{outcome}"
        );
        assert_eq!(read.unwrap(), b"hello");
        assert_eq!(write.unwrap_err().raw_os_error(), Some(libc::EROFS));
    }
}
