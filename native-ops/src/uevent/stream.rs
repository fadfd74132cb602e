//! A NETLINK_KOBJECT_UEVENT socket joined to the kernel's group (1), drained
//! by a thread this module owns into a bounded [`Queue`]. Only datagrams whose
//! sender is the kernel (nl_pid 0) are parsed; udev's re-broadcasts and any
//! other process's are counted and ignored. `close` wakes the thread through
//! an eventfd and joins it, so nothing is left blocked on the socket.

use super::parse::{parse, MAX_MESSAGE};
use super::queue::{Delivery, Queue};
use crate::error::{SysErr, SysResult};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

const NETLINK_KOBJECT_UEVENT: libc::c_int = 15;
/// The kernel's multicast group for uevents (udev's own is 2).
const KERNEL_GROUP: u32 = 1;
/// The socket's receive buffer: what the kernel may queue before ENOBUFS.
const RCVBUF: libc::c_int = 1 << 20;

/// A live uevent stream.
pub struct Stream {
    queue: Arc<Queue>,
    wake: Arc<OwnedFd>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

fn cvt(rc: libc::c_int, op: &str) -> SysResult<libc::c_int> {
    if rc < 0 {
        Err(SysErr::last(op, "NETLINK_KOBJECT_UEVENT"))
    } else {
        Ok(rc)
    }
}

fn open_socket() -> SysResult<OwnedFd> {
    // SAFETY: plain socket(2) call; the fd is owned immediately.
    let raw = cvt(
        unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                NETLINK_KOBJECT_UEVENT,
            )
        },
        "socket",
    )?;
    // SAFETY: raw is a fresh fd nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // Best effort (RCVBUFFORCE needs CAP_NET_ADMIN; the plain one is capped).
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: RCVBUF is a live c_int for the call.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                &RCVBUF as *const _ as _,
                4,
            )
        };
        if rc == 0 {
            break;
        }
    }
    // SAFETY: zeroed sockaddr_nl is valid; we set family and group.
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as u16;
    addr.nl_groups = KERNEL_GROUP;
    // SAFETY: addr is a valid sockaddr_nl of the given size.
    cvt(
        unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        },
        "bind",
    )?;
    Ok(fd)
}

/// Receive one datagram: its length (MSG_TRUNC: the real length, which may
/// exceed the buffer) and its sender's port id; None when nothing is queued.
fn recv(fd: i32, buf: &mut [u8]) -> SysResult<Option<(usize, u32)>> {
    loop {
        // SAFETY: zeroed sockaddr_nl is a valid out-parameter.
        let mut from: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: buf and from are valid for writes of the given sizes.
        let n = unsafe {
            libc::recvfrom(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_TRUNC | libc::MSG_DONTWAIT,
                &mut from as *mut _ as *mut libc::sockaddr,
                &mut len,
            )
        };
        if n >= 0 {
            return Ok(Some((n as usize, from.nl_pid)));
        }
        let e = SysErr::last("recvfrom", "NETLINK_KOBJECT_UEVENT");
        match e.errno {
            libc::EINTR => continue,
            libc::EAGAIN => return Ok(None),
            _ => return Err(e),
        }
    }
}

/// Drain every queued datagram into the queue. Err only for a lasting failure.
fn drain(fd: i32, buf: &mut [u8], queue: &Queue) -> SysResult<()> {
    loop {
        match recv(fd, buf) {
            Ok(None) => return Ok(()),
            Ok(Some((_, pid))) if pid != 0 => queue.deliver(Delivery::Foreign),
            Ok(Some((n, _))) if n > buf.len() => queue.deliver(Delivery::Rejected),
            Ok(Some((n, _))) => queue.deliver(match parse(&buf[..n]) {
                Ok(ev) => Delivery::Event(Box::new(ev)),
                Err(_) => Delivery::Rejected,
            }),
            Err(e) if e.errno == libc::ENOBUFS => queue.deliver(Delivery::Overrun),
            Err(e) => return Err(e),
        }
    }
}

fn run(sock: OwnedFd, wake: Arc<OwnedFd>, queue: Arc<Queue>) {
    let mut buf = vec![0u8; MAX_MESSAGE];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: sock.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: fds is a valid array of 2 pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            let e = SysErr::last("poll", "NETLINK_KOBJECT_UEVENT");
            if e.errno == libc::EINTR {
                continue;
            }
            return queue.fail(e);
        }
        if fds[1].revents != 0 || queue.is_closed() {
            return;
        }
        if let Err(e) = drain(sock.as_raw_fd(), &mut buf, &queue) {
            return queue.fail(e);
        }
    }
}

impl Stream {
    /// Open the socket and start the receive thread with a queue of `capacity`.
    pub fn open(capacity: usize) -> SysResult<Self> {
        let sock = open_socket()?;
        // SAFETY: plain eventfd(2) call; the fd is owned immediately.
        let raw = cvt(
            unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) },
            "eventfd",
        )?;
        // SAFETY: raw is a fresh fd nobody else owns.
        let wake = Arc::new(unsafe { OwnedFd::from_raw_fd(raw) });
        let queue = Arc::new(Queue::new(capacity));
        let (q, w) = (queue.clone(), wake.clone());
        let thread = std::thread::Builder::new()
            .name("uevent".into())
            .spawn(move || run(sock, w, q))
            .map_err(|e| SysErr::io("spawn", "uevent thread", &e))?;
        Ok(Self {
            queue,
            wake,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The queue readers take batches from.
    pub fn queue(&self) -> &Arc<Queue> {
        &self.queue
    }

    /// Stop the thread, close the socket and wake every reader. Idempotent.
    pub fn close(&self) {
        self.queue.close();
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), &one as *const u64 as *const _, 8) };
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.close();
    }
}
