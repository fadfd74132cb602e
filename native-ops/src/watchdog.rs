//! The Linux watchdog device (`/dev/watchdog`, linux/watchdog.h): adopt the
//! descriptor machined-init armed (or open one), set its timeout, pet it, and
//! disarm it with the magic close. Every call is a single non-blocking ioctl
//! or write, so the bindings are synchronous: a pet runs on the JavaScript
//! thread itself, which is the point (a stuck thread stops petting).

use crate::error::{SysErr, SysResult};
use crate::util::{check, cstring};

// _IOR('W', 0, struct watchdog_info), _IOR('W', 5, int), _IOWR('W', 6, int), _IOR('W', 7, int).
const WDIOC_GETSUPPORT: libc::c_ulong = 0x8028_5700;
const WDIOC_KEEPALIVE: libc::c_ulong = 0x8004_5705;
const WDIOC_SETTIMEOUT: libc::c_ulong = 0xc004_5706;
const WDIOC_GETTIMEOUT: libc::c_ulong = 0x8004_5707;

#[repr(C)]
struct WatchdogInfo {
    options: u32,
    firmware_version: u32,
    identity: [u8; 32],
}

/// What the device says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// The driver's name, e.g. `Software Watchdog` (softdog) or `i6300ESB timer`.
    pub identity: String,
    /// The timeout in force, in seconds.
    pub timeout_s: u32,
}

fn fd_arg(op: &str, fd: i32) -> SysResult<i32> {
    if fd < 3 {
        return Err(SysErr::new(
            op,
            libc::EBADF,
            format!("fd {fd} is not a watchdog"),
        ));
    }
    Ok(fd)
}

/// Takes over an inherited descriptor: marks it close-on-exec (so no service
/// ever inherits it and a magic close really is the last close) and reads
/// the driver's identity and timeout.
pub fn adopt(fd: i32) -> SysResult<Info> {
    let fd = fd_arg("watchdog_adopt", fd)?;
    // SAFETY: fcntl on an integer descriptor; a bad one is EBADF.
    check("fcntl", "FD_CLOEXEC", unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC)
    })?;
    info(fd)
}

/// Opens `path` (close-on-exec), which arms the watchdog with its current timeout.
pub fn open(path: &str) -> SysResult<i32> {
    let p = cstring("watchdog_open", path)?;
    // SAFETY: a valid C string.
    check("open", path, unsafe {
        libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC)
    })
}

/// The driver's identity and timeout (WDIOC_GETSUPPORT, WDIOC_GETTIMEOUT).
pub fn info(fd: i32) -> SysResult<Info> {
    let mut wi = WatchdogInfo {
        options: 0,
        firmware_version: 0,
        identity: [0; 32],
    };
    // SAFETY: the kernel writes at most sizeof(struct watchdog_info) bytes.
    check("ioctl", "WDIOC_GETSUPPORT", unsafe {
        libc::ioctl(fd, WDIOC_GETSUPPORT as _, &mut wi as *mut WatchdogInfo)
    })?;
    let end = wi
        .identity
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(wi.identity.len());
    let identity = String::from_utf8_lossy(&wi.identity[..end]).into_owned();
    let mut t: libc::c_int = 0;
    // SAFETY: the kernel writes one int.
    check("ioctl", "WDIOC_GETTIMEOUT", unsafe {
        libc::ioctl(fd, WDIOC_GETTIMEOUT as _, &mut t as *mut libc::c_int)
    })?;
    Ok(Info {
        identity,
        timeout_s: t.max(0) as u32,
    })
}

/// WDIOC_SETTIMEOUT (which also pets); returns the timeout the driver chose.
pub fn set_timeout(fd: i32, seconds: u32) -> SysResult<u32> {
    let fd = fd_arg("watchdog_set_timeout", fd)?;
    let mut t = seconds as libc::c_int;
    // SAFETY: the kernel reads and writes one int.
    check("ioctl", &format!("WDIOC_SETTIMEOUT {seconds}"), unsafe {
        libc::ioctl(fd, WDIOC_SETTIMEOUT as _, &mut t as *mut libc::c_int)
    })?;
    Ok(t.max(0) as u32)
}

/// WDIOC_KEEPALIVE: one pet.
pub fn keepalive(fd: i32) -> SysResult<()> {
    let fd = fd_arg("watchdog_keepalive", fd)?;
    let mut dummy: libc::c_int = 0;
    // SAFETY: the argument is ignored by the kernel; a valid int pointer anyway.
    check("ioctl", "WDIOC_KEEPALIVE", unsafe {
        libc::ioctl(fd, WDIOC_KEEPALIVE as _, &mut dummy as *mut libc::c_int)
    })
    .map(|_| ())
}

/// The magic close: write `V`, then close, which stops the timer (unless the
/// kernel was built with WATCHDOG_NOWAYOUT, when nothing can).
pub fn disarm(fd: i32) -> SysResult<()> {
    let fd = fd_arg("watchdog_disarm", fd)?;
    // SAFETY: one byte from a static buffer.
    let n = unsafe { libc::write(fd, b"V".as_ptr().cast(), 1) };
    let written = if n == 1 {
        Ok(())
    } else {
        Err(SysErr::last("write", "magic V"))
    };
    // SAFETY: closing an integer descriptor we own.
    let closed = check("close", "watchdog", unsafe { libc::close(fd) }).map(|_| ());
    written.and(closed)
}

pub mod js {
    use napi_derive::napi;

    /// The device's identity and timeout.
    #[napi(object)]
    pub struct WatchdogInfo {
        pub identity: String,
        pub timeout_s: u32,
    }

    impl From<super::Info> for WatchdogInfo {
        fn from(i: super::Info) -> Self {
            Self {
                identity: i.identity,
                timeout_s: i.timeout_s,
            }
        }
    }

    /// Takes over an inherited, armed descriptor (sets FD_CLOEXEC).
    #[napi]
    pub fn watchdog_adopt(fd: i32) -> napi::Result<WatchdogInfo> {
        Ok(super::adopt(fd)?.into())
    }

    /// Opens (and so arms) a watchdog device; returns its descriptor.
    #[napi]
    pub fn watchdog_open(path: String) -> napi::Result<i32> {
        Ok(super::open(&path)?)
    }

    /// Sets the timeout in seconds; returns the one the driver chose.
    #[napi]
    pub fn watchdog_set_timeout(fd: i32, seconds: u32) -> napi::Result<u32> {
        Ok(super::set_timeout(fd, seconds)?)
    }

    /// One pet (WDIOC_KEEPALIVE), on the calling (JavaScript) thread.
    #[napi]
    pub fn watchdog_keepalive(fd: i32) -> napi::Result<()> {
        Ok(super::keepalive(fd)?)
    }

    /// Magic close: stops the watchdog and closes the descriptor.
    #[napi]
    pub fn watchdog_disarm(fd: i32) -> napi::Result<()> {
        Ok(super::disarm(fd)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_linux_watchdog_h() {
        // _IOC(dir, 'W', nr, size): dir<<30 | size<<16 | 'W'<<8 | nr.
        let ioc = |dir: u64, nr: u64, size: u64| {
            ((dir << 30) | (size << 16) | (0x57 << 8) | nr) as libc::c_ulong
        };
        assert_eq!(
            WDIOC_GETSUPPORT,
            ioc(2, 0, std::mem::size_of::<WatchdogInfo>() as u64)
        );
        assert_eq!(WDIOC_KEEPALIVE, ioc(2, 5, 4));
        assert_eq!(WDIOC_SETTIMEOUT, ioc(3, 6, 4));
        assert_eq!(WDIOC_GETTIMEOUT, ioc(2, 7, 4));
    }

    #[test]
    fn refuses_stdio_and_bad_descriptors() {
        assert_eq!(keepalive(1).unwrap_err().errno, libc::EBADF);
        assert_eq!(adopt(9999).unwrap_err().errno, libc::EBADF);
        assert_eq!(
            open("/nonexistent/watchdog").unwrap_err().errno,
            libc::ENOENT
        );
    }
}
