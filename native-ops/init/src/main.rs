//! machined-init: the first instructions PID 1 runs.
//!
//! Deno reads `/proc/self/exe` as soon as a `node:` module loads and panics
//! without `/proc`, and a dead PID 1 is a kernel panic. So the kernel starts
//! this tiny program first (`rdinit=/sbin/machined-init -- /usr/bin/deno run ...`):
//! it mounts `/proc`, `/sys` and `/dev`, then `execv`s its arguments, which
//! keeps PID 1. machined's boot sequence skips mounts that already exist.
//!
//! It never exits: if exec fails it reports why on the console and reboots
//! after a delay instead of letting the kernel panic.

use std::ffi::CString;
use std::io::Write;

fn main() {
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
        if let Err(e) = mount(source, target, fstype, flags, data) {
            console(&format!("machined-init: mount {target}: {e}"));
        }
    }
    let args: Vec<CString> = std::env::args()
        .skip(1)
        .filter_map(|a| CString::new(a).ok())
        .collect();
    if args.is_empty() {
        fail("no program to run: pass it after -- on the kernel command line");
    }
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a null-terminated array of valid C strings that outlive the call.
    unsafe { libc::execv(args[0].as_ptr(), argv.as_ptr()) };
    let err = std::io::Error::last_os_error();
    fail(&format!("exec {:?}: {err}", args[0]));
}

fn mount(
    source: &str,
    target: &str,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> std::io::Result<()> {
    let _ = std::fs::create_dir_all(target);
    let c = |s: &str| CString::new(s).expect("no NUL in constant strings");
    let (source, target, fstype, data) = (c(source), c(target), c(fstype), c(data));
    // SAFETY: all pointers are valid NUL-terminated strings for the duration of the call.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    // Already mounted is fine (EBUSY).
    if e.raw_os_error() == Some(libc::EBUSY) {
        return Ok(());
    }
    Err(e)
}

fn console(line: &str) {
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
