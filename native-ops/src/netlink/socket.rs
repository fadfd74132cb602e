//! A NETLINK_ROUTE socket: send one request, collect its dump or its ACK, and
//! turn NLMSG_ERROR into a [`SysErr`] carrying the kernel's errno (and its
//! extended-ack text, when the kernel gives one, in the detail).

use super::message::{
    parse_error, parse_messages, MsgBuilder, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLMSG_OVERRUN,
    NLM_F_DUMP_INTR,
};
use crate::error::{SysErr, SysResult};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

const RECV_BUF: usize = 64 * 1024;
const SOL_NETLINK: libc::c_int = 270;
const NETLINK_EXT_ACK: libc::c_int = 11;
const NETLINK_GET_STRICT_CHK: libc::c_int = 12;

static SEQ: AtomicU32 = AtomicU32::new(1);

/// One message of a dump, owned: its type and its payload.
#[derive(Debug, Clone)]
pub struct Owned {
    pub msg_type: u16,
    pub payload: Vec<u8>,
}

/// An rtnetlink socket bound to `groups` (0 for request/response use).
pub struct NlSocket {
    fd: OwnedFd,
}

impl NlSocket {
    /// Open a NETLINK_ROUTE socket. `groups` is a list of RTNLGRP_* numbers
    /// to join for event delivery.
    pub fn open(groups: &[u32]) -> SysResult<Self> {
        // SAFETY: plain socket(2) call; the fd is owned immediately.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if raw < 0 {
            return Err(SysErr::last("socket", "AF_NETLINK/NETLINK_ROUTE"));
        }
        // SAFETY: `raw` is a fresh valid fd that nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: zeroed sockaddr_nl is a valid "pid 0, no groups" address.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: addr is a valid sockaddr_nl of the given size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if rc < 0 {
            return Err(SysErr::last("bind", "AF_NETLINK"));
        }
        let sock = Self { fd };
        // Best effort: kernels without these options still work.
        let _ = sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1);
        let _ = sock.setsockopt(SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1);
        let _ = sock.setsockopt(libc::SOL_SOCKET, libc::SO_RCVBUF, 1 << 20);
        for &g in groups {
            sock.setsockopt(SOL_NETLINK, libc::NETLINK_ADD_MEMBERSHIP, g as i32)
                .map_err(|e| {
                    SysErr::new("NETLINK_ADD_MEMBERSHIP", e.errno, format!("group {g}"))
                })?;
        }
        Ok(sock)
    }

    /// The raw fd, for poll(2).
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    fn setsockopt(&self, level: i32, name: i32, value: i32) -> SysResult<()> {
        // SAFETY: value is a live i32 for the duration of the call.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                &value as *const i32 as *const libc::c_void,
                4,
            )
        };
        if rc < 0 {
            return Err(SysErr::last("setsockopt", format!("{level}/{name}")));
        }
        Ok(())
    }

    fn send(&self, msg: &[u8], op: &str) -> SysResult<()> {
        // SAFETY: zeroed sockaddr_nl addresses the kernel (pid 0).
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as u16;
        // SAFETY: msg and addr are valid for the call.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr() as *const libc::c_void,
                msg.len(),
                0,
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if rc < 0 {
            return Err(SysErr::last(op, "sendto netlink"));
        }
        Ok(())
    }

    /// Receive one datagram (blocking unless `flags` has MSG_DONTWAIT).
    pub fn recv(&self, buf: &mut [u8], flags: i32, op: &str) -> SysResult<usize> {
        loop {
            // SAFETY: buf is a valid writable slice.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    flags,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = SysErr::last(op, "recv netlink");
            if e.errno != libc::EINTR {
                return Err(e);
            }
        }
    }

    /// Send a request with NLM_F_ACK and wait for its ACK. A negative ACK
    /// becomes `SysErr { op, errno, detail }` with the kernel's message added.
    pub fn request(&self, msg: MsgBuilder, op: &str, detail: &str) -> SysResult<()> {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        self.send(&msg.finish(seq), op)?;
        let mut buf = vec![0u8; RECV_BUF];
        loop {
            let n = self.recv(&mut buf, 0, op)?;
            let msgs =
                parse_messages(&buf[..n]).map_err(|m| SysErr::new(op, libc::EBADMSG, m.0))?;
            for m in msgs {
                if m.seq != seq || m.msg_type != NLMSG_ERROR {
                    continue;
                }
                let (errno, text) =
                    parse_error(&m).map_err(|e| SysErr::new(op, libc::EBADMSG, e.0))?;
                if errno == 0 {
                    return Ok(());
                }
                return Err(SysErr::new(op, errno, with_text(detail, text)));
            }
        }
    }

    /// Send a dump request and collect every reply message until NLMSG_DONE.
    /// Retries (up to 3 times) when the kernel flags the dump as interrupted.
    pub fn dump(&self, make: impl Fn() -> MsgBuilder, op: &str) -> SysResult<Vec<Owned>> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.dump_once(make(), op)? {
                Some(out) => return Ok(out),
                None if attempt < 3 => continue,
                None => return Err(SysErr::new(op, libc::EINTR, "dump interrupted 3 times")),
            }
        }
    }

    fn dump_once(&self, msg: MsgBuilder, op: &str) -> SysResult<Option<Vec<Owned>>> {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        self.send(&msg.finish(seq), op)?;
        let mut buf = vec![0u8; RECV_BUF];
        let mut out = Vec::new();
        let mut interrupted = false;
        loop {
            let n = self.recv(&mut buf, 0, op)?;
            let msgs =
                parse_messages(&buf[..n]).map_err(|m| SysErr::new(op, libc::EBADMSG, m.0))?;
            for m in msgs {
                if m.seq != seq {
                    continue;
                }
                if m.flags & NLM_F_DUMP_INTR != 0 {
                    interrupted = true;
                }
                match m.msg_type {
                    NLMSG_DONE => return Ok((!interrupted).then_some(out)),
                    NLMSG_ERROR => {
                        let (errno, text) =
                            parse_error(&m).map_err(|e| SysErr::new(op, libc::EBADMSG, e.0))?;
                        if errno != 0 {
                            return Err(SysErr::new(op, errno, with_text("dump", text)));
                        }
                    }
                    NLMSG_NOOP | NLMSG_OVERRUN => {}
                    t => out.push(Owned {
                        msg_type: t,
                        payload: m.payload.to_vec(),
                    }),
                }
            }
        }
    }
}

fn with_text(detail: &str, text: Option<String>) -> String {
    match text {
        Some(t) if !t.is_empty() => format!("{detail}: {t}"),
        _ => detail.to_string(),
    }
}
