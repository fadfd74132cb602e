//! The output pump: one thread polls the read ends of every child's stdout and
//! stderr pipe (non-blocking) and queues what it reads on the [`Hub`], so
//! TypeScript needs one long-poll for all processes instead of a blocked
//! worker per pipe. All pipe fds are closed on this thread, which is how a
//! close can never race a poll on a reused fd number.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::hub::{Chunk, Hub};
use crate::error::{SysErr, SysResult};

const READ_SIZE: usize = 64 * 1024;

#[derive(Default)]
struct Pipes {
    next_id: u32,
    open: HashMap<u32, RawFd>,
    closing: Vec<u32>,
}

/// Registered pipes plus the eventfd that interrupts the poll.
pub struct Pump {
    pipes: Mutex<Pipes>,
    wake_fd: RawFd,
}

impl Pump {
    /// The process-wide pump, started on first use.
    pub fn global() -> SysResult<&'static Pump> {
        static PUMP: OnceLock<Result<Pump, SysErr>> = OnceLock::new();
        PUMP.get_or_init(|| {
            // SAFETY: plain eventfd.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if fd < 0 {
                return Err(SysErr::last("eventfd", "pump"));
            }
            std::thread::Builder::new()
                .name("machined-pump".into())
                .spawn(|| {
                    if let Ok(p) = Pump::global() {
                        p.run();
                    }
                })
                .map_err(|e| SysErr::io("pthread_create", "pump", &e))?;
            Ok(Pump {
                pipes: Mutex::default(),
                wake_fd: fd,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    fn lock(&self) -> MutexGuard<'_, Pipes> {
        self.pipes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Interrupt the poll so the pipe set is rebuilt.
    pub fn poke(&self) {
        let one: u64 = 1;
        // SAFETY: 8-byte write to our eventfd; EAGAIN (counter full) is fine.
        unsafe { libc::write(self.wake_fd, (&one as *const u64).cast(), 8) };
    }

    /// Take ownership of a non-blocking read fd; returns its pipe id (never reused).
    pub fn register(&self, fd: RawFd) -> u32 {
        let id = {
            let mut p = self.lock();
            p.next_id += 1;
            let id = p.next_id;
            p.open.insert(id, fd);
            id
        };
        self.poke();
        id
    }

    /// Stop reading a pipe and close it (the pump thread does the close and
    /// reports eof). Unknown ids are ignored: the pipe already ended.
    pub fn close(&self, id: u32) {
        self.lock().closing.push(id);
        self.poke();
    }

    fn finish(&self, hub: &Hub, id: u32) {
        if let Some(fd) = self.lock().open.remove(&id) {
            // SAFETY: we own fd; it is removed from the set before closing.
            unsafe { libc::close(fd) };
            hub.push_chunk(Chunk {
                pipe: id,
                data: Vec::new(),
                eof: true,
            });
        }
    }

    fn run(&self) {
        let hub = Hub::global();
        let mut buf = vec![0u8; READ_SIZE];
        loop {
            let closing: Vec<u32> = std::mem::take(&mut self.lock().closing);
            for id in closing {
                self.finish(hub, id);
            }
            let watched: Vec<(u32, RawFd)> = self
                .lock()
                .open
                .iter()
                .map(|(id, fd)| (*id, *fd))
                .filter(|(id, _)| hub.pipe_has_room(*id))
                .collect();
            let mut fds: Vec<libc::pollfd> = std::iter::once(self.wake_fd)
                .chain(watched.iter().map(|(_, fd)| *fd))
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: fds is a valid pollfd array of its length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 {
                continue; // EINTR
            }
            if fds[0].revents != 0 {
                let mut counter: u64 = 0;
                // SAFETY: 8-byte read from our eventfd.
                unsafe { libc::read(self.wake_fd, (&mut counter as *mut u64).cast(), 8) };
            }
            for (pfd, (id, fd)) in fds[1..].iter().zip(&watched) {
                if pfd.revents == 0 {
                    continue;
                }
                // SAFETY: buf is writable for its length; fd is open (only this thread closes).
                let got = unsafe { libc::read(*fd, buf.as_mut_ptr().cast(), buf.len()) };
                if got > 0 {
                    hub.push_chunk(Chunk {
                        pipe: *id,
                        data: buf[..got as usize].to_vec(),
                        eof: false,
                    });
                } else if got == 0 {
                    self.finish(hub, *id);
                } else {
                    let errno = std::io::Error::last_os_error().raw_os_error();
                    if !matches!(errno, Some(libc::EAGAIN) | Some(libc::EINTR)) {
                        self.finish(hub, *id);
                    }
                }
            }
        }
    }
}
