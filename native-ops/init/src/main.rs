//! machined-init: the first instructions PID 1 runs.
//!
//! The kernel starts it from a tiny initramfs
//! (`rdinit=/sbin/machined-init machined.slot=A machined.root.sha256=<hex> -- /usr/bin/deno run ...`).
//! It mounts `/proc`, `/sys` and `/dev`; when the command line names a root
//! image it loads the modules that reach it, finds the ESP, verifies
//! `/<slot>/root.img` against the hash, mounts it read-only with tmpfs on
//! /run, /tmp and /var, and switches into it (root.rs). Then it `execv`s its
//! arguments, which keeps PID 1 (with the watchdog armed just before, its
//! descriptor inherited: watchdog.rs): Deno reads `/proc/self/exe` as soon as a
//! `node:` module loads and panics without `/proc`, and machined's boot
//! sequence skips mounts that already exist.
//!
//! With a TPM it extends PCR 11 with the `enter-initrd` and `leave-initrd`
//! phases (tpm.rs), after systemd-stub's measurement of the UKI, and carries
//! the stub's signed PCR policy from `/.extra` to `/run/machined/stub`
//! (stub_extra.rs).
//!
//! Its first line and the root-mounted line carry the guest's uptime
//! (`uptime_s=`, uptime.rs), so the host can time the boot's phases.
//!
//! It never exits: if exec fails it reports why on the console and reboots
//! after a delay instead of letting the kernel panic.

mod bootargs;
mod dm;
mod esp;
mod extensions;
mod root;
mod sha256;
mod stub_extra;
mod sys;
mod tpm;
mod trial;
mod uptime;
mod watchdog;

use std::ffi::CString;
use std::io::Write;

fn main() {
    // Before anything else: the kernel's share of the boot ends here.
    console(&uptime::start_line(uptime::now()));
    for (source, target, fstype, flags, data) in [
        (
            "proc",
            "/proc",
            "proc",
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            "",
        ),
        (
            "sysfs",
            "/sys",
            "sysfs",
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            "",
        ),
        ("devtmpfs", "/dev", "devtmpfs", libc::MS_NOSUID, "mode=0755"),
    ] {
        if let Err(e) = sys::mount(source, target, fstype, flags, data) {
            console(&format!("machined-init: mount {target}: {e}"));
        }
    }
    tpm::measure_phase("enter-initrd");
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    match bootargs::parse(&cmdline) {
        Ok(Some(root)) => {
            if let Err(e) = root::mount_root(&root) {
                fail(&e);
            }
            // softdog came with the root image's modules; from here a hang reboots.
            watchdog::arm(&cmdline);
        }
        Ok(None) => stub_extra::carry_into(""),
        Err(e) => fail(&e),
    }
    let args: Vec<CString> = std::env::args()
        .skip(1)
        .filter_map(|a| CString::new(a).ok())
        .collect();
    if args.is_empty() {
        fail("no program to run: pass it after -- on the kernel command line");
    }
    tpm::measure_phase("leave-initrd");
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a null-terminated array of valid C strings that outlive the call.
    unsafe { libc::execv(args[0].as_ptr(), argv.as_ptr()) };
    let err = std::io::Error::last_os_error();
    fail(&format!("exec {:?}: {err}", args[0]));
}

pub(crate) fn console(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn fail(why: &str) -> ! {
    console(&format!("machined-init: FATAL: {why}; rebooting in 10 s"));
    std::thread::sleep(std::time::Duration::from_secs(10));
    // SAFETY: sync and reboot take no pointers.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_AUTOBOOT);
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
