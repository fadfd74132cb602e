//! The DHCP client sockets. DHCPv4: UDP bound to 0.0.0.0:68 on one interface
//! (SO_BINDTODEVICE) with SO_BROADCAST and SO_REUSEADDR. DHCPv6
//! ([`DhcpSocket::open_v6`]): UDP on [::]:546, IPv6 only, bound to the
//! interface, multicast sent out of it (IPV6_MULTICAST_IF) so SOLICIT reaches
//! ff02::1:2 on that link; replies come unicast to its link-local address. Linux delivers
//! limited-broadcast replies to it even while the interface has no address,
//! as long as the link is up, so no AF_PACKET socket (and no hand-built
//! IP/UDP headers or BPF filter) is needed. `close` wakes pending receives.

use crate::error::{SysErr, SysResult};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// One received datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram {
    pub data: Vec<u8>,
    pub from: IpAddr,
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
    /** The interface index for IPv6 (scope of link-local and multicast peers); 0 for IPv4. */
    ifindex: u32,
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

/// A nonblocking, close-on-exec UDP socket of `family`, owned at once.
fn udp_socket(family: i32, ifname: &str) -> SysResult<OwnedFd> {
    // SAFETY: plain socket(2) call; owned immediately.
    let raw = unsafe {
        libc::socket(
            family,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            libc::IPPROTO_UDP,
        )
    };
    if raw < 0 {
        return Err(SysErr::last("socket", ifname));
    }
    // SAFETY: fresh fd.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// SO_BINDTODEVICE, its error naming the link.
fn bind_to_device(raw: i32, ifname: &str) -> SysResult<()> {
    setopt(
        raw,
        libc::SOL_SOCKET,
        libc::SO_BINDTODEVICE,
        ifname.as_bytes(),
        "SO_BINDTODEVICE",
    )
    .map_err(|e| SysErr::new("SO_BINDTODEVICE", e.errno, ifname))
}

impl DhcpSocket {
    /// Open and bind to `ifname`, local `port` (68 for a client).
    pub fn open(ifname: &str, port: u16) -> SysResult<Self> {
        super::link::check_name("SO_BINDTODEVICE", ifname)?;
        let fd = udp_socket(libc::AF_INET, ifname)?;
        let raw = fd.as_raw_fd();
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
        bind_to_device(raw, ifname)?;
        let addr = sockaddr(Ipv4Addr::UNSPECIFIED, port);
        let label = format!("0.0.0.0:{port} on {ifname}");
        Self::bound(fd, &addr, label, ifname, 0)
    }

    /// Open an IPv6 socket on `[::]:port` (546 for a client) bound to `ifname`.
    pub fn open_v6(ifname: &str, port: u16) -> SysResult<Self> {
        super::link::check_name("SO_BINDTODEVICE", ifname)?;
        let cname = std::ffi::CString::new(ifname)
            .map_err(|_| SysErr::new("if_nametoindex", libc::EINVAL, ifname))?;
        // SAFETY: cname is a valid NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(SysErr::new("if_nametoindex", libc::ENODEV, ifname));
        }
        let fd = udp_socket(libc::AF_INET6, ifname)?;
        let raw = fd.as_raw_fd();
        let one = 1i32.to_ne_bytes();
        setopt(
            raw,
            libc::IPPROTO_IPV6,
            libc::IPV6_V6ONLY,
            &one,
            "IPV6_V6ONLY",
        )?;
        setopt(
            raw,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one,
            "SO_REUSEADDR",
        )?;
        bind_to_device(raw, ifname)?;
        let idx = (ifindex as i32).to_ne_bytes();
        setopt(
            raw,
            libc::IPPROTO_IPV6,
            libc::IPV6_MULTICAST_IF,
            &idx,
            "IPV6_MULTICAST_IF",
        )?;
        let addr = sockaddr6(Ipv6Addr::UNSPECIFIED, port, 0);
        let label = format!("[::]:{port} on {ifname}");
        Self::bound(fd, &addr, label, ifname, ifindex)
    }

    /// Bind `fd` to `addr` (a `sockaddr_in` or `sockaddr_in6`) and add the
    /// eventfd that wakes a blocked receive on close; both families share it.
    fn bound<A>(
        fd: OwnedFd,
        addr: &A,
        label: String,
        ifname: &str,
        ifindex: u32,
    ) -> SysResult<Self> {
        // SAFETY: addr is a valid sockaddr of its own size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                addr as *const A as *const libc::sockaddr,
                std::mem::size_of::<A>() as u32,
            )
        };
        if rc < 0 {
            return Err(SysErr::last("bind", label));
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
            ifindex,
        })
    }

    /// Send one datagram (255.255.255.255:67 for DISCOVER/REQUEST, ff02::1:2:547 for SOLICIT).
    pub fn send_to(&self, data: &[u8], to: IpAddr, port: u16) -> SysResult<()> {
        let v4;
        let v6;
        let (ptr, len) = match to {
            IpAddr::V4(ip) => {
                v4 = sockaddr(ip, port);
                (
                    &v4 as *const _ as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>(),
                )
            }
            IpAddr::V6(ip) => {
                v6 = sockaddr6(ip, port, self.ifindex);
                (
                    &v6 as *const _ as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in6>(),
                )
            }
        };
        // SAFETY: data and the sockaddr behind ptr are valid for the call.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                data.as_ptr() as *const _,
                data.len(),
                0,
                ptr,
                len as u32,
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
            // SAFETY: zeroed sockaddr_storage is valid output storage.
            let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as u32;
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
                let (from, port) = peer(&from);
                return Ok(Recv::Datagram(Datagram {
                    data: buf,
                    from,
                    port,
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

fn sockaddr6(ip: Ipv6Addr, port: u16, scope: u32) -> libc::sockaddr_in6 {
    // SAFETY: zeroed sockaddr_in6 is valid.
    let mut a: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
    a.sin6_family = libc::AF_INET6 as u16;
    a.sin6_port = port.to_be();
    a.sin6_addr.s6_addr = ip.octets();
    // Link-local and link-scope multicast peers need the link; others ignore it.
    let link_scoped = ip.segments()[0] & 0xffc0 == 0xfe80 || ip.segments()[0] & 0xff0f == 0xff02;
    a.sin6_scope_id = if link_scoped { scope } else { 0 };
    a
}

/// The sender of a received datagram, whichever family.
fn peer(s: &libc::sockaddr_storage) -> (IpAddr, u16) {
    if s.ss_family == libc::AF_INET6 as u16 {
        // SAFETY: the family says the storage holds a sockaddr_in6.
        let a = unsafe { &*(s as *const _ as *const libc::sockaddr_in6) };
        (
            IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr)),
            u16::from_be(a.sin6_port),
        )
    } else {
        // SAFETY: otherwise it is the IPv4 socket's sockaddr_in.
        let a = unsafe { &*(s as *const _ as *const libc::sockaddr_in) };
        (
            IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr))),
            u16::from_be(a.sin_port),
        )
    }
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
    fn sockaddr6_scopes_only_link_local_and_link_multicast() {
        let all_servers: Ipv6Addr = "ff02::1:2".parse().unwrap();
        assert_eq!(sockaddr6(all_servers, 547, 7).sin6_scope_id, 7);
        assert_eq!(
            sockaddr6("fe80::1".parse().unwrap(), 547, 7).sin6_scope_id,
            7
        );
        assert_eq!(
            sockaddr6("fd00::1".parse().unwrap(), 547, 7).sin6_scope_id,
            0
        );
        assert_eq!(sockaddr6(all_servers, 547, 7).sin6_port, 547u16.to_be());
    }

    #[test]
    fn missing_interface_v6_is_enodev() {
        let e = DhcpSocket::open_v6("nosuchif0", 0)
            .err()
            .expect("must fail");
        assert_eq!(e.op, "if_nametoindex");
        assert_eq!(e.errno, libc::ENODEV);
    }

    #[test]
    fn missing_interface_is_enodev_or_eperm() {
        // Without CAP_NET_RAW SO_BINDTODEVICE is EPERM; as root it is ENODEV.
        let e = DhcpSocket::open("nosuchif0", 0).err().expect("must fail");
        assert_eq!(e.op, "SO_BINDTODEVICE");
        assert!(e.errno == libc::ENODEV || e.errno == libc::EPERM);
    }
}
