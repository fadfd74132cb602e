//! The `machined.*` words of /proc/cmdline that name the slot and its root
//! image. The kernel keeps dotted words to itself (they look like module
//! parameters), so they are read here rather than from init's environment.

/** Where the root image is and what it must hash to. */
#[derive(Debug, PartialEq)]
pub struct RootArgs {
    /// The slot directory on the ESP: `A` or `B`.
    pub slot: String,
    /// Lowercase hex SHA-256 of the whole root image file.
    pub sha256: String,
    /// The file system type of the image (`squashfs` or `erofs`).
    pub fstype: String,
    /// The image's dm-verity tree, from `machined.root.verity=<root>,<salt>,<data blocks>`:
    /// when present the image is mounted through dm-verity, not hashed first.
    pub verity: Option<Verity>,
}

/** A dm-verity tree after the image's data (format 1, sha256, 4096-byte blocks). */
#[derive(Debug, PartialEq)]
pub struct Verity {
    /// Lowercase hex sha256 root hash.
    pub root_hash: String,
    /// Lowercase hex salt (prepended to each hashed block).
    pub salt: String,
    /// 4096-byte data blocks; the tree starts at this block of the same image.
    pub data_blocks: u64,
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Parses `<root>,<salt>,<data blocks>`: a 64-digit root hash, a salt of 1..=256 hex digits
/// (an even count), a block count above zero.
fn parse_verity(v: &str) -> Result<Verity, String> {
    let bad =
        || format!("machined.root.verity={v} is not <64 hex digits>,<hex salt>,<data blocks>");
    let mut parts = v.split(',');
    let (Some(root), Some(salt), Some(blocks), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if !is_hex(root, 64)
        || salt.is_empty()
        || !is_hex(salt, salt.len())
        || salt.len() % 2 != 0
        || salt.len() > 512
    {
        return Err(bad());
    }
    let data_blocks: u64 = blocks.parse().map_err(|_| bad())?;
    if data_blocks == 0 {
        return Err(bad());
    }
    Ok(Verity {
        root_hash: root.to_ascii_lowercase(),
        salt: salt.to_ascii_lowercase(),
        data_blocks,
    })
}

/// Sets `slot` to `value` unless a word already did.
fn once<T>(slot: &mut Option<T>, value: T, key: &str) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("{key}= appears twice on the command line"));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses the command line; `Ok(None)` when no root image is named (the
/// whole root is then the initramfs, as in a probe image).
pub fn parse(cmdline: &str) -> Result<Option<RootArgs>, String> {
    let mut slot = None;
    let mut sha256 = None;
    let mut fstype = None;
    let mut verity = None;
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        // Each of these words names what boots; two of one (even agreeing) mean the entry was
        // not written by a node, and machined would read the slot as unknown: refuse to boot.
        if let Some(v) = word.strip_prefix("machined.slot=") {
            once(&mut slot, v.to_string(), "machined.slot")?;
        } else if let Some(v) = word.strip_prefix("machined.root.sha256=") {
            once(&mut sha256, v.to_ascii_lowercase(), "machined.root.sha256")?;
        } else if let Some(v) = word.strip_prefix("machined.root.fstype=") {
            once(&mut fstype, v.to_string(), "machined.root.fstype")?;
        } else if let Some(v) = word.strip_prefix("machined.root.verity=") {
            once(&mut verity, parse_verity(v)?, "machined.root.verity")?;
        }
    }
    let Some(sha256) = sha256 else {
        return Ok(None);
    };
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "machined.root.sha256={sha256} is not 64 hex digits"
        ));
    }
    let slot = slot.unwrap_or_else(|| "A".to_string());
    if slot != "A" && slot != "B" {
        return Err(format!("machined.slot={slot} is neither A nor B"));
    }
    let fstype = fstype.unwrap_or_else(|| "squashfs".to_string());
    if fstype != "squashfs" && fstype != "erofs" {
        return Err(format!(
            "machined.root.fstype={fstype} is neither squashfs nor erofs"
        ));
    }
    Ok(Some(RootArgs {
        slot,
        sha256,
        fstype,
        verity,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    const H: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn reads_slot_and_hash_before_the_separator() {
        let line =
            format!("console=ttyS0 machined.slot=B machined.root.sha256={H} -- machined.slot=A");
        let r = parse(&line).unwrap().unwrap();
        assert_eq!(
            r,
            RootArgs {
                slot: "B".into(),
                sha256: H.into(),
                fstype: "squashfs".into(),
                verity: None
            }
        );
    }

    #[test]
    fn reads_the_verity_word() {
        let (r, s) = ("AB".repeat(32), "cd".repeat(32));
        let line = format!("machined.root.sha256={H} machined.root.verity={r},{s},20480 -- x");
        let got = parse(&line).unwrap().unwrap().verity.unwrap();
        assert_eq!(
            got,
            Verity {
                root_hash: "ab".repeat(32),
                salt: s.clone(),
                data_blocks: 20480
            }
        );
        for bad in [
            format!("{r},{s}"),
            format!("{r},{s},0"),
            format!("{r},{s},x"),
            format!("{r},,5"),
            format!("{r},abc,5"),
            format!("ab,{s},5"),
            format!("{r},{s},5,6"),
        ] {
            let line = format!("machined.root.sha256={H} machined.root.verity={bad}");
            assert!(parse(&line).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_hash_means_no_root_image() {
        assert_eq!(parse("console=ttyS0 machined.slot=A").unwrap(), None);
    }

    #[test]
    fn rejects_bad_words() {
        assert!(parse("machined.root.sha256=abc").is_err());
        assert!(parse(&format!("machined.slot=C machined.root.sha256={H}")).is_err());
        assert!(parse(&format!(
            "machined.root.fstype=ext4 machined.root.sha256={H}"
        ))
        .is_err());
    }

    #[test]
    fn refuses_a_word_that_names_what_boots_twice() {
        // A bundle once appended `machined.slot=A` to slot B's entry: machined read A, this read B.
        for line in [
            format!("machined.slot=B machined.root.sha256={H} machined.slot=A"),
            format!("machined.slot=A machined.slot=A machined.root.sha256={H}"),
            format!("machined.root.sha256={H} machined.root.sha256={H}"),
            format!(
                "machined.root.fstype=erofs machined.root.sha256={H} machined.root.fstype=squashfs"
            ),
        ] {
            let err = parse(&line).unwrap_err();
            assert!(err.contains("appears twice"), "{line}: {err}");
        }
        // init's own arguments after `--` are not the node's words.
        let ok = format!("machined.slot=B machined.root.sha256={H} -- machined.slot=A");
        assert_eq!(parse(&ok).unwrap().unwrap().slot, "B");
    }
}
