//! What systemd-stub hands the initramfs besides the UKI's own initrd: the
//! UKI's `.pcrsig` and `.pcrpkey` as `/.extra/tpm2-pcr-signature.json` and
//! `/.extra/tpm2-pcr-public-key.pem` (systemd-stub(7)). The initramfs is
//! freed at the switch into the root image, so these two files (and only
//! they, each at most 64 KiB) are copied into the new root's
//! `/run/machined/stub/`, which is then bind-mounted read-only on itself:
//! machined's `tpm` keys read the signed PCR 11 policy there
//! (platform/crypt/tpm_policy.ts), and nothing on the node can change it.

use crate::sys;

/// Where systemd-stub puts its files in the initramfs.
pub const SOURCE: &str = "/.extra";
/// Where machined reads them, under the root it runs in.
pub const DEST: &str = "/run/machined/stub";
/// The files carried; anything else in /.extra (credentials, sysexts) stays behind.
pub const FILES: [&str; 2] = ["tpm2-pcr-signature.json", "tpm2-pcr-public-key.pem"];
const MAX_BYTES: u64 = 64 * 1024;

/// Copies the known files present in `from` into `to` (created 0755, files
/// 0444); returns the names copied. Nothing is created when none is present;
/// a file over 64 KiB or unreadable is skipped with a console line.
pub fn carry(from: &str, to: &str) -> std::io::Result<Vec<&'static str>> {
    use std::os::unix::fs::PermissionsExt;
    let mut copied = Vec::new();
    for name in FILES {
        let src = format!("{from}/{name}");
        let Ok(meta) = std::fs::metadata(&src) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_BYTES {
            crate::console(&format!(
                "machined-init: {src} is not a file of at most {MAX_BYTES} bytes; left behind"
            ));
            continue;
        }
        std::fs::create_dir_all(to)?;
        let dst = format!("{to}/{name}");
        std::fs::write(&dst, std::fs::read(&src)?)?;
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o444))?;
        copied.push(name);
    }
    Ok(copied)
}

/// Carries the stub's files into `root` and makes the directory a read-only
/// bind mount; says so on the console. Never fatal: without them the node
/// boots, and its `tpm` key slots say the policy is missing.
pub fn carry_into(root: &str) {
    let to = format!("{root}{DEST}");
    match carry(SOURCE, &to) {
        Ok(names) if names.is_empty() => {}
        Ok(names) => {
            let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
            let sealed = sys::mount(&to, &to, "", libc::MS_BIND, "").and_then(|_| {
                sys::mount(
                    "",
                    &to,
                    "",
                    ro | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    "",
                )
            });
            match sealed {
                Ok(()) => crate::console(&format!(
                    "machined-init: carried {} from {SOURCE} to {DEST} (read-only)",
                    names.join(", ")
                )),
                Err(e) => crate::console(&format!(
                    "machined-init: carried {} to {DEST}, not read-only: {e}",
                    names.join(", ")
                )),
            }
        }
        Err(e) => crate::console(&format!("machined-init: carry {SOURCE} to {DEST}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{carry, FILES};
    use std::os::unix::fs::PermissionsExt;

    fn temp(tag: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("machined-init-extra-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn the_stubs_policy_files_are_carried_read_only_and_nothing_else() {
        let (from, to) = (temp("from"), temp("to"));
        std::fs::create_dir_all(&from).unwrap();
        std::fs::write(from.join(FILES[0]), br#"{"sha256":[]}"#).unwrap();
        std::fs::write(from.join(FILES[1]), b"-----BEGIN PUBLIC KEY-----\n").unwrap();
        std::fs::write(from.join("credentials.cred"), b"secret").unwrap();
        let to_s = to.join("run/machined/stub");
        let got = carry(from.to_str().unwrap(), to_s.to_str().unwrap()).unwrap();
        assert_eq!(got, FILES.to_vec());
        assert_eq!(
            std::fs::read(to_s.join(FILES[0])).unwrap(),
            br#"{"sha256":[]}"#
        );
        let mode = std::fs::metadata(to_s.join(FILES[1]))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o444);
        assert!(!to_s.join("credentials.cred").exists());
        std::fs::remove_dir_all(&from).unwrap();
        std::fs::remove_dir_all(&to).unwrap();
    }

    #[test]
    fn no_stub_files_no_directory_and_an_oversized_one_stays_behind() {
        let (from, to) = (temp("none"), temp("none-to"));
        std::fs::create_dir_all(&from).unwrap();
        assert!(carry(from.to_str().unwrap(), to.to_str().unwrap())
            .unwrap()
            .is_empty());
        assert!(!to.exists());
        std::fs::write(from.join(FILES[0]), vec![b' '; 64 * 1024 + 1]).unwrap();
        assert!(carry(from.to_str().unwrap(), to.to_str().unwrap())
            .unwrap()
            .is_empty());
        assert!(!to.exists());
        std::fs::remove_dir_all(&from).unwrap();
    }
}
