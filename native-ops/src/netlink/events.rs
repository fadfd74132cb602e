//! Change events: a NETLINK_ROUTE socket joined to multicast groups, read by
//! a blocking `wait` that a worker thread runs. `close` wakes any pending wait
//! through an eventfd, so closing never leaves a thread (or Deno's event loop)
//! waiting on the socket.

use super::addr::{self, Address, RTM_DELADDR, RTM_NEWADDR};
use super::link::{self, Link, RTM_DELLINK, RTM_NEWLINK};
use super::message::parse_messages;
use super::route::{self, Route, RTM_DELROUTE, RTM_NEWROUTE};
use super::socket::NlSocket;
use crate::error::{SysErr, SysResult};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

pub const RTNLGRP_LINK: u32 = 1;
pub const RTNLGRP_IPV4_IFADDR: u32 = 5;
pub const RTNLGRP_IPV4_ROUTE: u32 = 7;
pub const RTNLGRP_IPV6_IFADDR: u32 = 9;
pub const RTNLGRP_IPV6_ROUTE: u32 = 11;

/// The group number for a name used by the TypeScript side.
pub fn group_by_name(name: &str) -> Option<u32> {
    Some(match name {
        "link" => RTNLGRP_LINK,
        "ipv4-address" => RTNLGRP_IPV4_IFADDR,
        "ipv6-address" => RTNLGRP_IPV6_IFADDR,
        "ipv4-route" => RTNLGRP_IPV4_ROUTE,
        "ipv6-route" => RTNLGRP_IPV6_ROUTE,
        _ => return None,
    })
}

/// One change notification. `removed` is true for RTM_DEL*. A link is boxed:
/// with its kind's info it is several times the size of the other variants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Link { removed: bool, link: Box<Link> },
    Address { removed: bool, address: Address },
    Route { removed: bool, route: Route },
}

/// Decode every event in one datagram, ignoring message types it does not know.
pub fn decode_events(buf: &[u8]) -> Vec<Event> {
    let Ok(msgs) = parse_messages(buf) else {
        return Vec::new();
    };
    msgs.iter()
        .filter_map(|m| match m.msg_type {
            RTM_NEWLINK | RTM_DELLINK => link::decode(m.payload).map(|l| Event::Link {
                removed: m.msg_type == RTM_DELLINK,
                link: Box::new(l),
            }),
            RTM_NEWADDR | RTM_DELADDR => addr::decode(m.payload).map(|a| Event::Address {
                removed: m.msg_type == RTM_DELADDR,
                address: a,
            }),
            RTM_NEWROUTE | RTM_DELROUTE => route::decode(m.payload).map(|r| Event::Route {
                removed: m.msg_type == RTM_DELROUTE,
                route: r,
            }),
            _ => None,
        })
        .collect()
}

/// A live subscription.
pub struct Subscription {
    sock: NlSocket,
    wake: OwnedFd,
    closed: AtomicBool,
}

/// What one wait produced.
#[derive(Debug)]
pub enum Wait {
    Events(Vec<Event>),
    TimedOut,
    Closed,
}

impl Subscription {
    /// Join `groups` (RTNLGRP_* numbers).
    pub fn open(groups: &[u32]) -> SysResult<Self> {
        let sock = NlSocket::open(groups)?;
        // SAFETY: plain eventfd(2) call; the fd is owned immediately.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            return Err(SysErr::last("eventfd", "netlink subscription"));
        }
        Ok(Self {
            sock,
            // SAFETY: raw is a fresh fd owned by nobody else.
            wake: unsafe { OwnedFd::from_raw_fd(raw) },
            closed: AtomicBool::new(false),
        })
    }

    /// Wake every pending and future [`Subscription::wait`] with `Closed`.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), &one as *const u64 as *const _, 8) };
    }

    /// Block up to `timeout_ms` for the next datagram of events. Overflow of
    /// the socket buffer surfaces as ENOBUFS: events were lost, resync by
    /// listing; the subscription stays usable.
    pub fn wait(&self, timeout_ms: i32) -> SysResult<Wait> {
        if self.closed.load(Ordering::SeqCst) {
            return Ok(Wait::Closed);
        }
        let mut fds = [
            libc::pollfd {
                fd: self.sock.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: fds is a valid array of 2 pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if n < 0 {
            let e = SysErr::last("poll", "netlink subscription");
            return if e.errno == libc::EINTR {
                Ok(Wait::TimedOut)
            } else {
                Err(e)
            };
        }
        if self.closed.load(Ordering::SeqCst) || fds[1].revents != 0 {
            return Ok(Wait::Closed);
        }
        if n == 0 || fds[0].revents == 0 {
            return Ok(Wait::TimedOut);
        }
        let mut buf = vec![0u8; 64 * 1024];
        match self
            .sock
            .recv(&mut buf, libc::MSG_DONTWAIT, "netlink events")
        {
            Ok(len) => Ok(Wait::Events(decode_events(&buf[..len]))),
            Err(e) if e.errno == libc::EAGAIN => Ok(Wait::TimedOut),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::message::MsgBuilder;
    use super::*;

    #[test]
    fn decodes_mixed_datagram() {
        let mut buf = MsgBuilder::new(RTM_NEWLINK, 0)
            .header(&[0u8; 16])
            .attr_str(3, "eth0")
            .finish(0);
        buf.extend(
            MsgBuilder::new(RTM_DELADDR, 0)
                .header(&[libc::AF_INET as u8, 24, 0, 0, 2, 0, 0, 0])
                .attr(2, &[10, 0, 0, 1])
                .finish(0),
        );
        buf.extend(MsgBuilder::new(99, 0).finish(0));
        let ev = decode_events(&buf);
        assert_eq!(ev.len(), 2);
        assert!(matches!(&ev[0], Event::Link { removed: false, link } if link.name == "eth0"));
        assert!(
            matches!(&ev[1], Event::Address { removed: true, address } if address.prefix_len == 24)
        );
    }

    #[test]
    fn names_groups() {
        assert_eq!(group_by_name("link"), Some(1));
        assert_eq!(group_by_name("ipv6-address"), Some(9));
        assert_eq!(group_by_name("nope"), None);
    }
}
