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
}

/// Parses the command line; `Ok(None)` when no root image is named (the
/// whole root is then the initramfs, as in a probe image).
pub fn parse(cmdline: &str) -> Result<Option<RootArgs>, String> {
    let mut slot = None;
    let mut sha256 = None;
    let mut fstype = "squashfs".to_string();
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        if let Some(v) = word.strip_prefix("machined.slot=") {
            slot = Some(v.to_string());
        } else if let Some(v) = word.strip_prefix("machined.root.sha256=") {
            sha256 = Some(v.to_ascii_lowercase());
        } else if let Some(v) = word.strip_prefix("machined.root.fstype=") {
            fstype = v.to_string();
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
    if fstype != "squashfs" && fstype != "erofs" {
        return Err(format!(
            "machined.root.fstype={fstype} is neither squashfs nor erofs"
        ));
    }
    Ok(Some(RootArgs {
        slot,
        sha256,
        fstype,
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
                fstype: "squashfs".into()
            }
        );
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
}
