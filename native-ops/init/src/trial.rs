//! The Raspberry Pi 3's one-shot trial boot (docs/decisions.md, "A/B on the
//! Raspberry Pi 3"). Its firmware has no `tryboot` and no boot counter: an
//! upgrade writes `os_prefix=B/` to the boot partition's `trial.txt`, which
//! config.txt includes after `slot.txt` (the blessed slot). The try is
//! consumed here, by the first code of ours that runs on that boot, before
//! anything that could fail: trial.txt becomes `# tried B`, so whatever
//! happens next (a root image that does not verify, a machined that never
//! gets ready), the next boot reads slot.txt and starts the blessed slot.
//! machined blesses B by writing slot.txt. On a UEFI ESP there is no
//! trial.txt and nothing happens.

use crate::{console, sys};

/// trial.txt's path on the mounted boot partition.
const TRIAL: &str = "/esp/trial.txt";

/// trial.txt's new text when it arms `slot` (the slot booting now), else None.
pub fn consumed(text: &str, slot: &str) -> Option<String> {
    let armed = text
        .lines()
        .any(|l| l.trim() == format!("os_prefix={slot}/"));
    armed.then(|| format!("# tried {slot}\n"))
}

/// Consume the try of `slot` if trial.txt arms it: remount the boot partition
/// read-write, rewrite the file, sync, remount read-only. A failure is
/// reported, not fatal: refusing the boot would retry the same trial.
pub fn consume(esp_mount: &str, slot: &str) {
    let Ok(text) = std::fs::read_to_string(TRIAL) else {
        return;
    };
    let Some(next) = consumed(&text, slot) else {
        return;
    };
    let remount = |ro: libc::c_ulong| {
        let flags = libc::MS_REMOUNT | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | ro;
        sys::mount("none", esp_mount, "vfat", flags, "")
    };
    let result = remount(0)
        .map_err(|e| format!("remount read-write: {e}"))
        .and_then(|_| write_synced(TRIAL, &next).map_err(|e| format!("write {TRIAL}: {e}")));
    let _ = remount(libc::MS_RDONLY);
    match result {
        Ok(()) => console(&format!(
            "machined-init: trial boot of slot {slot}: try consumed"
        )),
        Err(e) => console(&format!(
            "machined-init: trial of slot {slot} NOT consumed: {e}"
        )),
    }
}

fn write_synced(path: &str, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::consumed;

    #[test]
    fn only_a_trial_of_the_booting_slot_is_consumed() {
        assert_eq!(
            consumed("os_prefix=B/\n", "B").as_deref(),
            Some("# tried B\n")
        );
        assert_eq!(consumed("os_prefix=B/\n", "A"), None);
        assert_eq!(consumed("# no trial\n", "B"), None);
        assert_eq!(consumed("# tried B\n", "B"), None);
    }
}
