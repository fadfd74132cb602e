//! The kernel log: /dev/kmsg read non-blocking, one record per read(2).
//!
//! A reader owns the kmsg fd and an eventfd. `read` takes what is there and,
//! when nothing is, waits in poll(2) for a record or a wake-up, bounded by the
//! caller's timeout; `close` wakes a pending read and drops the reader (the fds
//! close when the last user lets go, so a close never races a poll on a reused
//! fd number). EPIPE from the kernel means records were overwritten before we
//! read them: reported as `lost`, and reading goes on from the oldest kept one.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::error::{SysErr, SysResult};
use crate::util::cstring;

/// The kernel's limit on one record (PRINTK_MESSAGE_MAX plus the prefix), rounded up.
const RECORD_MAX: usize = 8192;

struct Reader {
    fd: OwnedFd,
    wake: OwnedFd,
}

/// What one `read` got.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Raw records (`pri,seq,usec,flags[,...];text` plus continuation lines).
    pub records: Vec<String>,
    /// Records were overwritten before they could be read.
    pub lost: bool,
    /// The reader was closed (by `close` or because it never existed).
    pub closed: bool,
}

fn readers() -> MutexGuard<'static, HashMap<u32, Arc<Reader>>> {
    static READERS: OnceLock<Mutex<HashMap<u32, Arc<Reader>>>> = OnceLock::new();
    READERS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn next_id() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Opens `path` (normally /dev/kmsg) non-blocking; returns the reader id.
pub fn open(path: &str) -> SysResult<u32> {
    let c = cstring("open", path)?;
    // SAFETY: valid C string; flags only.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(SysErr::last("open", path));
    }
    // SAFETY: fd was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain eventfd.
    let wake = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if wake < 0 {
        return Err(SysErr::last("eventfd", path));
    }
    // SAFETY: as above.
    let wake = unsafe { OwnedFd::from_raw_fd(wake) };
    let id = next_id();
    readers().insert(id, Arc::new(Reader { fd, wake }));
    Ok(id)
}

/// Takes up to `max` records; waits up to `wait_ms` when there are none yet.
pub fn read(id: u32, max: usize, wait_ms: i32) -> SysResult<Batch> {
    let Some(reader) = readers().get(&id).cloned() else {
        return Ok(Batch {
            closed: true,
            ..Batch::default()
        });
    };
    let mut batch = drain(&reader, max)?;
    if batch.records.is_empty() && !batch.lost && wait_ms > 0 {
        let mut fds = [
            libc::pollfd {
                fd: reader.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: reader.wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: fds is a valid pollfd array of its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(SysErr::last("poll", "kmsg"));
        }
        if fds[1].revents != 0 {
            return Ok(Batch {
                closed: true,
                ..Batch::default()
            });
        }
        batch = drain(&reader, max)?;
    }
    batch.closed = !readers().contains_key(&id);
    Ok(batch)
}

fn drain(reader: &Reader, max: usize) -> SysResult<Batch> {
    let mut batch = Batch::default();
    let mut buf = vec![0u8; RECORD_MAX];
    while batch.records.len() < max {
        // SAFETY: buf is writable for its length; the fd lives as long as `reader`.
        let got = unsafe { libc::read(reader.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if got > 0 {
            let text = String::from_utf8_lossy(&buf[..got as usize]);
            batch.records.push(text.trim_end_matches('\n').to_string());
            continue;
        }
        if got == 0 {
            break; // a FIFO whose writer went away (tests); /dev/kmsg never ends
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN) => break,
            Some(libc::EINTR) => continue,
            Some(libc::EPIPE) => batch.lost = true,
            _ => return Err(SysErr::last("read", "kmsg")),
        }
    }
    Ok(batch)
}

/// Closes a reader; a pending `read` returns `closed` at once. Unknown ids are ignored.
pub fn close(id: u32) {
    if let Some(reader) = readers().remove(&id) {
        let one: u64 = 1;
        // SAFETY: 8-byte write to our eventfd.
        unsafe { libc::write(reader.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// Records read from the kernel log.
    #[napi(object)]
    pub struct KmsgBatch {
        /// Raw records, `pri,seq,usec,flags;text` (continuation lines follow `\n`).
        pub records: Vec<String>,
        /// Records were overwritten before they were read.
        pub lost: bool,
        /// The reader is closed; stop reading.
        pub closed: bool,
    }

    /// Opens the kernel log (non-blocking); returns a reader id.
    #[napi]
    pub fn kmsg_open(path: String) -> napi::Result<u32> {
        Ok(super::open(&path)?)
    }

    /// Takes up to `max` records, waiting up to `wait_ms` for the first.
    #[napi]
    pub async fn kmsg_read(id: u32, max: u32, wait_ms: i32) -> napi::Result<KmsgBatch> {
        blocking("kmsg_read", move || {
            let b = super::read(id, max as usize, wait_ms)?;
            Ok(KmsgBatch {
                records: b.records,
                lost: b.lost,
                closed: b.closed,
            })
        })
        .await
    }

    /// Closes a reader; a pending read resolves as closed.
    #[napi]
    pub fn kmsg_close(id: u32) {
        super::close(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fifo() -> (std::path::PathBuf, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("kmsg-test-{}-{}", std::process::id(), next_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fifo");
        let c = cstring("mkfifo", path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        (dir, path)
    }

    #[test]
    fn reads_what_is_there_then_times_out_empty() {
        let (dir, path) = fifo();
        let id = open(path.to_str().unwrap()).unwrap();
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all(b"6,1,100,-;hello\n").unwrap();
        let b = read(id, 16, 1000).unwrap();
        assert_eq!(b.records, vec!["6,1,100,-;hello".to_string()]);
        assert!(!b.closed);
        let started = std::time::Instant::now();
        let empty = read(id, 16, 50).unwrap();
        assert!(empty.records.is_empty());
        assert!(started.elapsed().as_millis() >= 40);
        close(id);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn close_wakes_a_pending_read() {
        let (dir, path) = fifo();
        let id = open(path.to_str().unwrap()).unwrap();
        let _w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let t = std::thread::spawn(move || read(id, 16, 10_000).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let started = std::time::Instant::now();
        close(id);
        let b = t.join().unwrap();
        assert!(b.closed);
        assert!(started.elapsed().as_millis() < 5000);
        assert!(read(id, 1, 0).unwrap().closed);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_device_is_enoent() {
        let e = open("/nonexistent/kmsg").unwrap_err();
        assert_eq!(e.errno, libc::ENOENT);
    }
}
