//! The DHCPv4 client socket: UDP bound to 0.0.0.0:68 on one interface
//! (SO_BINDTODEVICE) with SO_BROADCAST and SO_REUSEADDR. Linux delivers
//! limited-broadcast replies to it even while the interface has no address,
//! as long as the link is up, so no AF_PACKET socket (and no hand-built
//! IP/UDP headers or BPF filter) is needed. `close` wakes pending receives.

use crate::error::{SysErr, SysResult};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// One received datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    pub data: Vec<u8>,
    pub from: Ipv4Addr,
    pub port: u16,
}

/// Outcome of a receive.
#[derive(Debug)]
pub enum Recv {
    Datagram(Datagram),
    TimedOut,
    Closed,
}

/// A UDP socket bound to one interface.
pub struct DhcpSocket {
    fd: OwnedFd,
    wake: OwnedFd,
    closed: AtomicBool,
    ifname: String,
}

fn setopt(fd: i32, level: i32, name: i32, val: &[u8], what: &str) -> SysResult<()> {
    // SAFETY: val is a live buffer of the given length.
    let rc =
        unsafe { libc::setsockopt(fd, level, name, val.as_ptr() as *const _, val.len() as u32) };
    if rc < 0 {
        return Err(SysErr::last("setsockopt", what.to_string()));
    }
    Ok(())
}

impl DhcpSocket {
    /// Open and bind to `ifname`, local `port` (68 for a client).
    pub fn open(ifname: &str, port: u16) -> SysResult<Self> {
        super::link::check_name("SO_BINDTODEVICE", ifname)?;
        // SAFETY: plain socket(2) call; owned immediately.
        let raw = unsafe {
            libc::socket(
                libc::AF_INET,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                libc::IPPROTO_UDP,
            )
        };
        if raw < 0 {
            return Err(SysErr::last("socket", ifname));
        }
        // SAFETY: fresh fd.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let one = 1i32.to_ne_bytes();
        setopt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one,
            "SO_REUSEADDR",
        )?;
        setopt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_BROADCAST,
            &one,
            "SO_BROADCAST",
        )?;
        setopt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_BINDTODEVICE,
            ifname.as_bytes(),
            "SO_BINDTODEVICE",
        )
        .map_err(|e| SysErr::new("SO_BINDTODEVICE", e.errno, ifname))?;
        let addr = sockaddr(Ipv4Addr::UNSPECIFIED, port);
        // SAFETY: addr is a valid sockaddr_in.
        let rc = unsafe {
            libc::bind(
                raw,
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            )
        };
        if rc < 0 {
            return Err(SysErr::last("bind", format!("0.0.0.0:{port} on {ifname}")));
        }
        // SAFETY: plain eventfd(2).
        let w = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if w < 0 {
            return Err(SysErr::last("eventfd", ifname));
        }
        Ok(Self {
            fd,
            // SAFETY: fresh fd.
            wake: unsafe { OwnedFd::from_raw_fd(w) },
            closed: AtomicBool::new(false),
            ifname: ifname.to_string(),
        })
    }

    /// Send one datagram (255.255.255.255:67 for DISCOVER/REQUEST).
    pub fn send_to(&self, data: &[u8], to: Ipv4Addr, port: u16) -> SysResult<()> {
        let addr = sockaddr(to, port);
        // SAFETY: data and addr are valid for the call.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                data.as_ptr() as *const _,
                data.len(),
                0,
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            )
        };
        if rc < 0 {
            return Err(SysErr::last(
                "sendto",
                format!("{to}:{port} via {}", self.ifname),
            ));
        }
        Ok(())
    }

    /// Wait up to `timeout_ms` for one datagram.
    pub fn recv(&self, timeout_ms: i32) -> SysResult<Recv> {
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return Ok(Recv::Closed);
            }
            let mut buf = vec![0u8; 65536];
            // SAFETY: zeroed sockaddr_in is valid output storage.
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as u32;
            // SAFETY: buf/from/len are valid output storage.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut _,
                    buf.len(),
                    0,
                    &mut from as *mut _ as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if n >= 0 {
                buf.truncate(n as usize);
                return Ok(Recv::Datagram(Datagram {
                    data: buf,
                    from: Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr)),
                    port: u16::from_be(from.sin_port),
                }));
            }
            let e = SysErr::last("recvfrom", self.ifname.clone());
            if e.errno != libc::EAGAIN && e.errno != libc::EINTR {
                return Err(e);
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.fd.as_raw_fd(),
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
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
            if r == 0 {
                return Ok(Recv::TimedOut);
            }
            if r < 0 {
                let e = SysErr::last("poll", self.ifname.clone());
                if e.errno != libc::EINTR {
                    return Err(e);
                }
            }
            if fds[1].revents != 0 {
                return Ok(Recv::Closed);
            }
        }
    }

    /// Wake pending receives; the fd closes when the last reference drops.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), &one as *const u64 as *const _, 8) };
    }
}

fn sockaddr(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    // SAFETY: zeroed sockaddr_in is valid.
    let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    a.sin_family = libc::AF_INET as u16;
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from(ip).to_be();
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_is_network_order() {
        let a = sockaddr(Ipv4Addr::BROADCAST, 67);
        assert_eq!(a.sin_port, 67u16.to_be());
        assert_eq!(a.sin_addr.s_addr, u32::MAX);
    }

    #[test]
    fn missing_interface_is_enodev_or_eperm() {
        // Without CAP_NET_RAW SO_BINDTODEVICE is EPERM; as root it is ENODEV.
        let e = DhcpSocket::open("nosuchif0", 0).err().expect("must fail");
        assert_eq!(e.op, "SO_BINDTODEVICE");
        assert!(e.errno == libc::ENODEV || e.errno == libc::EPERM);
    }
}
