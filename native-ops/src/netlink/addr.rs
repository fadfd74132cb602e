//! Addresses (RTM_*ADDR): decode `ifaddrmsg` + IFA_* attributes, list them,
//! add and delete IPv4/IPv6 addresses.

use super::link::index_of;
use super::message::{
    as_u32, attrs, c_string, u32_at, MsgBuilder, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL,
};
use super::socket::NlSocket;
use crate::error::{SysErr, SysResult};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const RTM_NEWADDR: u16 = 20;
pub const RTM_DELADDR: u16 = 21;
pub const RTM_GETADDR: u16 = 22;

const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_LABEL: u16 = 3;
const IFA_BROADCAST: u16 = 4;
const IFA_CACHEINFO: u16 = 6;
const IFA_FLAGS: u16 = 8;

/// Size of `struct ifaddrmsg`.
pub const IFADDRMSG_LEN: usize = 8;

/// One address as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub index: u32,
    pub address: IpAddr,
    /// The peer (IFA_ADDRESS) of a point-to-point address when it differs.
    pub peer: Option<IpAddr>,
    pub prefix_len: u8,
    /// RT_SCOPE_*: 0 universe, 200 site, 253 link, 254 host.
    pub scope: u8,
    /// IFA_F_* (IFA_FLAGS when present, which supersedes the 8-bit field).
    pub flags: u32,
    pub label: Option<String>,
    pub broadcast: Option<Ipv4Addr>,
    /// Lifetimes in seconds; u32::MAX is forever.
    pub valid_lft: Option<u32>,
    pub preferred_lft: Option<u32>,
}

/// What to add or delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressSpec {
    pub link: String,
    pub address: IpAddr,
    pub prefix_len: u8,
    pub scope: Option<u8>,
    pub flags: Option<u32>,
    pub label: Option<String>,
    pub broadcast: Option<Ipv4Addr>,
    pub valid_lft: Option<u32>,
    pub preferred_lft: Option<u32>,
}

/// Decode bytes of an address attribute of family `family`.
pub fn ip_from(family: u8, v: &[u8]) -> Option<IpAddr> {
    match (family as i32, v.len()) {
        (libc::AF_INET, 4) => Some(IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3]))),
        (libc::AF_INET6, 16) => {
            let mut b = [0u8; 16];
            b.copy_from_slice(v);
            Some(IpAddr::V6(Ipv6Addr::from(b)))
        }
        _ => None,
    }
}

/// The address family number and wire bytes of an IP.
pub fn ip_bytes(ip: &IpAddr) -> (u8, Vec<u8>) {
    match ip {
        IpAddr::V4(a) => (libc::AF_INET as u8, a.octets().to_vec()),
        IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets().to_vec()),
    }
}

/// Decode an RTM_NEWADDR / RTM_DELADDR payload.
pub fn decode(payload: &[u8]) -> Option<Address> {
    if payload.len() < IFADDRMSG_LEN {
        return None;
    }
    let family = payload[0];
    let mut local = None;
    let mut address = None;
    let mut a = Address {
        index: u32_at(payload, 4),
        address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        peer: None,
        prefix_len: payload[1],
        scope: payload[3],
        flags: payload[2] as u32,
        label: None,
        broadcast: None,
        valid_lft: None,
        preferred_lft: None,
    };
    for (ty, v) in attrs(&payload[IFADDRMSG_LEN..]) {
        match ty {
            IFA_ADDRESS => address = ip_from(family, v),
            IFA_LOCAL => local = ip_from(family, v),
            IFA_LABEL => a.label = Some(c_string(v)),
            IFA_BROADCAST => {
                if let Some(IpAddr::V4(b)) = ip_from(family, v) {
                    a.broadcast = Some(b)
                }
            }
            IFA_FLAGS => a.flags = as_u32(v).unwrap_or(a.flags),
            IFA_CACHEINFO if v.len() >= 8 => {
                a.preferred_lft = Some(u32_at(v, 0));
                a.valid_lft = Some(u32_at(v, 4));
            }
            _ => {}
        }
    }
    a.address = local.or(address)?;
    if local.is_some() && address.is_some() && address != local {
        a.peer = address;
    }
    Some(a)
}

fn ifaddrmsg(family: u8, prefix_len: u8, flags: u8, scope: u8, index: u32) -> [u8; IFADDRMSG_LEN] {
    let mut h = [0u8; IFADDRMSG_LEN];
    h[0] = family;
    h[1] = prefix_len;
    h[2] = flags;
    h[3] = scope;
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    h
}

/// The RTM_GETADDR dump request (all families).
pub fn dump_request() -> MsgBuilder {
    MsgBuilder::new(RTM_GETADDR, NLM_F_DUMP).header(&ifaddrmsg(0, 0, 0, 0, 0))
}

/// Build RTM_NEWADDR (create, exclusive) or RTM_DELADDR for `spec` on `index`.
pub fn change_request(new: bool, spec: &AddressSpec, index: u32) -> MsgBuilder {
    let (family, bytes) = ip_bytes(&spec.address);
    let flags = spec.flags.unwrap_or(0);
    let (ty, nl_flags) = if new {
        (RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL)
    } else {
        (RTM_DELADDR, NLM_F_ACK)
    };
    let mut m = MsgBuilder::new(ty, nl_flags).header(&ifaddrmsg(
        family,
        spec.prefix_len,
        (flags & 0xff) as u8,
        spec.scope.unwrap_or(0),
        index,
    ));
    if family == libc::AF_INET as u8 {
        m = m.attr(IFA_LOCAL, &bytes);
    }
    m = m.attr(IFA_ADDRESS, &bytes);
    if !new {
        return m;
    }
    if let Some(b) = spec.broadcast {
        m = m.attr(IFA_BROADCAST, &b.octets());
    }
    if let Some(l) = &spec.label {
        m = m.attr_str(IFA_LABEL, l);
    }
    if spec.flags.is_some() {
        m = m.attr_u32(IFA_FLAGS, flags);
    }
    if spec.valid_lft.is_some() || spec.preferred_lft.is_some() {
        let valid = spec.valid_lft.unwrap_or(u32::MAX);
        let preferred = spec.preferred_lft.unwrap_or(valid);
        let mut ci = [0u8; 16];
        ci[0..4].copy_from_slice(&preferred.to_ne_bytes());
        ci[4..8].copy_from_slice(&valid.to_ne_bytes());
        m = m.attr(IFA_CACHEINFO, &ci);
    }
    m
}

/// List addresses, optionally only those of link `index`.
pub fn list(sock: &NlSocket, index: Option<u32>) -> SysResult<Vec<Address>> {
    let msgs = sock.dump(dump_request, "RTM_GETADDR")?;
    Ok(msgs
        .iter()
        .filter(|m| m.msg_type == RTM_NEWADDR)
        .filter_map(|m| decode(&m.payload))
        .filter(|a| index.is_none_or(|i| a.index == i))
        .collect())
}

fn validate(op: &str, spec: &AddressSpec) -> SysResult<()> {
    let max = if spec.address.is_ipv4() { 32 } else { 128 };
    if spec.prefix_len > max {
        return Err(SysErr::new(op, libc::EINVAL, describe(spec)));
    }
    Ok(())
}

/// `10.0.0.1/24 on eth0`, for error details.
pub fn describe(spec: &AddressSpec) -> String {
    format!("{}/{} on {}", spec.address, spec.prefix_len, spec.link)
}

/// Add an address. Not idempotent by design: an existing address is EEXIST,
/// so callers can tell "already there" from "added". Missing link: ENODEV.
pub fn add(sock: &NlSocket, spec: &AddressSpec) -> SysResult<()> {
    validate("RTM_NEWADDR", spec)?;
    let index = index_of("RTM_NEWADDR", &spec.link)?;
    sock.request(
        change_request(true, spec, index),
        "RTM_NEWADDR",
        &describe(spec),
    )
}

/// Delete an address. A missing address is EADDRNOTAVAIL; a missing link ENODEV.
pub fn delete(sock: &NlSocket, spec: &AddressSpec) -> SysResult<()> {
    validate("RTM_DELADDR", spec)?;
    let index = index_of("RTM_DELADDR", &spec.link)?;
    sock.request(
        change_request(false, spec, index),
        "RTM_DELADDR",
        &describe(spec),
    )
}

#[cfg(test)]
mod tests {
    use super::super::message::parse_messages;
    use super::*;

    fn spec(addr: &str, len: u8) -> AddressSpec {
        AddressSpec {
            link: "eth0".into(),
            address: addr.parse().unwrap(),
            prefix_len: len,
            scope: None,
            flags: None,
            label: None,
            broadcast: None,
            valid_lft: None,
            preferred_lft: None,
        }
    }

    #[test]
    fn encodes_ipv4_add_with_local_and_label() {
        let mut s = spec("10.0.0.1", 24);
        s.label = Some("eth0:1".into());
        s.flags = Some(0x80); // IFA_F_PERMANENT
        let msg = change_request(true, &s, 4).finish(1);
        let m = parse_messages(&msg).unwrap();
        let a = decode(m[0].payload).unwrap();
        assert_eq!(a.address, "10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(a.peer, None);
        assert_eq!(a.prefix_len, 24);
        assert_eq!(a.index, 4);
        assert_eq!(a.label.as_deref(), Some("eth0:1"));
        assert_eq!(a.flags, 0x80);
        assert_eq!(
            m[0].flags & (NLM_F_CREATE | NLM_F_EXCL),
            NLM_F_CREATE | NLM_F_EXCL
        );
    }

    #[test]
    fn encodes_ipv6_with_lifetimes() {
        let mut s = spec("fd00::1", 64);
        s.valid_lft = Some(300);
        let msg = change_request(true, &s, 2).finish(1);
        let m = parse_messages(&msg).unwrap();
        assert_eq!(m[0].payload[0], libc::AF_INET6 as u8);
        let a = decode(m[0].payload).unwrap();
        assert_eq!(a.address, "fd00::1".parse::<IpAddr>().unwrap());
        assert_eq!(a.valid_lft, Some(300));
        assert_eq!(a.preferred_lft, Some(300));
    }

    #[test]
    fn decodes_point_to_point_peer() {
        let msg = MsgBuilder::new(RTM_NEWADDR, 0)
            .header(&ifaddrmsg(libc::AF_INET as u8, 32, 0, 0, 3))
            .attr(IFA_ADDRESS, &[10, 0, 0, 2])
            .attr(IFA_LOCAL, &[10, 0, 0, 1])
            .finish(1);
        let m = parse_messages(&msg).unwrap();
        let a = decode(m[0].payload).unwrap();
        assert_eq!(a.address.to_string(), "10.0.0.1");
        assert_eq!(a.peer.unwrap().to_string(), "10.0.0.2");
    }

    #[test]
    fn rejects_bad_prefix() {
        assert_eq!(
            validate("RTM_NEWADDR", &spec("10.0.0.1", 33))
                .unwrap_err()
                .errno,
            libc::EINVAL
        );
    }
}
