//! Arming the watchdog before machined runs, so a userspace that hangs
//! anywhere after this point (Deno's start, machined's boot, its event loop)
//! reboots the node, and a trial slot that hangs runs out its boot tries.
//!
//! softdog (or a hardware driver loaded before it) is loaded from the
//! initramfs' module list with the others. The descriptor is opened without
//! close-on-exec so Deno (PID 1 after the exec) inherits it; its number goes
//! to machined in `MACHINED_WATCHDOG_FD`. machined adopts it, sets the
//! running timeout (`machined.watchdog=`) and pets it from its event loop
//! (platform/watchdog, watchdog). The boot timeout here covers Deno's
//! start and machined's imports under emulation, so it is generous.

use crate::console;

/// The environment variable that carries the descriptor's number.
pub const FD_ENV: &str = "MACHINED_WATCHDOG_FD";
const DEVICE: &str = "/dev/watchdog";
/// Seconds machined has from the exec to its first pet, unless the command line says otherwise.
pub const DEFAULT_BOOT_TIMEOUT_S: u32 = 180;
// _IOWR('W', 6, int)
const WDIOC_SETTIMEOUT: libc::c_ulong = 0xc004_5706;

/// What the command line asks for: `None` when `machined.watchdog=off` (or `0`).
pub fn boot_timeout(cmdline: &str) -> Option<u32> {
    let mut enabled = true;
    let mut boot = DEFAULT_BOOT_TIMEOUT_S;
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        if let Some(v) = word.strip_prefix("machined.watchdog=") {
            enabled = !matches!(v, "off" | "0" | "false" | "no");
        } else if let Some(v) = word.strip_prefix("machined.watchdog.boot=") {
            if let Ok(s) = v.parse::<u32>() {
                boot = s.max(1);
            }
        }
    }
    enabled.then_some(boot)
}

/// Opens and arms the watchdog and exports its descriptor; a node without
/// one boots anyway (reported on the console), since a watchdog protects
/// the boot and must never be the reason it fails.
pub fn arm(cmdline: &str) {
    let Some(timeout) = boot_timeout(cmdline) else {
        console("machined-init: watchdog off (machined.watchdog=off)");
        return;
    };
    let path = std::ffi::CString::new(DEVICE).expect("no NUL");
    // SAFETY: a valid C string; no O_CLOEXEC on purpose, the exec must keep it.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        console(&format!(
            "machined-init: no watchdog ({DEVICE}: {e}); booting without one"
        ));
        return;
    }
    let mut t = timeout as libc::c_int;
    // SAFETY: the kernel reads and writes one int.
    if unsafe { libc::ioctl(fd, WDIOC_SETTIMEOUT as _, &mut t as *mut libc::c_int) } < 0 {
        let e = std::io::Error::last_os_error();
        console(&format!(
            "machined-init: watchdog timeout {timeout} s refused ({e}); keeping the driver's"
        ));
    }
    std::env::set_var(FD_ENV, fd.to_string());
    console(&format!(
        "machined-init: watchdog armed ({DEVICE}, fd {fd}, {t} s until machined pets it)"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_by_default_with_the_boot_timeout() {
        assert_eq!(
            boot_timeout("console=ttyS0 machined.slot=A"),
            Some(DEFAULT_BOOT_TIMEOUT_S)
        );
        assert_eq!(
            boot_timeout("machined.watchdog=30 machined.watchdog.boot=90"),
            Some(90)
        );
    }

    #[test]
    fn off_by_the_command_line_and_only_before_the_separator() {
        assert_eq!(boot_timeout("machined.watchdog=off"), None);
        assert_eq!(boot_timeout("machined.watchdog=0"), None);
        assert_eq!(
            boot_timeout("-- machined.watchdog=off"),
            Some(DEFAULT_BOOT_TIMEOUT_S)
        );
    }
}
