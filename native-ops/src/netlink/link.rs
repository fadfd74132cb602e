//! Links (RTM_*LINK): decode `ifinfomsg` + IFLA_* attributes, list all links,
//! and change admin state and MTU by name. Creating, deleting and enslaving
//! virtual links is `link_kind.rs`.

use super::link_kind::{decode_linkinfo, KindInfo};
use super::message::{as_u32, attrs, c_string, u16_at, u32_at, MsgBuilder, NLM_F_ACK, NLM_F_DUMP};
use super::socket::NlSocket;
use crate::error::{SysErr, SysResult};

pub const RTM_NEWLINK: u16 = 16;
pub const RTM_DELLINK: u16 = 17;
pub const RTM_GETLINK: u16 = 18;
pub const RTM_SETLINK: u16 = 19;

const IFLA_ADDRESS: u16 = 1;
const IFLA_BROADCAST: u16 = 2;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_LINK: u16 = 5;
const IFLA_MASTER: u16 = 10;
const IFLA_TXQLEN: u16 = 13;
const IFLA_OPERSTATE: u16 = 16;
const IFLA_LINKINFO: u16 = 18;
const IFLA_IFALIAS: u16 = 20;
const IFLA_CARRIER: u16 = 33;
const IFLA_MIN_MTU: u16 = 50;
const IFLA_MAX_MTU: u16 = 51;
const IFLA_PERM_ADDRESS: u16 = 54;

/// Size of `struct ifinfomsg`.
pub const IFINFOMSG_LEN: usize = 16;

/// One link as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Link {
    pub index: u32,
    pub name: String,
    /// ARPHRD_* hardware type (1 = ether, 772 = loopback).
    pub hw_type: u16,
    /// IFLA_INFO_KIND (veth, bridge, bond, ...); None for physical devices.
    pub kind: Option<String>,
    pub mac: Option<String>,
    /// IFLA_PERM_ADDRESS: the NIC's own MAC, which a bond port keeps here
    /// while the bond gives it the bond's.
    pub perm_mac: Option<String>,
    pub broadcast: Option<String>,
    pub mtu: u32,
    pub min_mtu: Option<u32>,
    pub max_mtu: Option<u32>,
    /// IFF_* flags (IFF_UP = 1, IFF_RUNNING = 0x40, IFF_LOWER_UP = 0x10000...).
    pub flags: u32,
    pub operstate: &'static str,
    pub carrier: Option<bool>,
    pub master: Option<u32>,
    /// IFLA_LINK: the parent (for a veth, the peer's index).
    pub parent: Option<u32>,
    pub txqlen: Option<u32>,
    /// IFLA_IFALIAS (machined marks the links it creates with one).
    pub alias: Option<String>,
    /// The kind's IFLA_INFO_DATA: VLAN id, bond mode, bridge STP...
    pub info: KindInfo,
}

/// RFC 2863 operational state names, indexed by IF_OPER_*.
pub fn operstate_name(v: u8) -> &'static str {
    match v {
        1 => "notpresent",
        2 => "down",
        3 => "lowerlayerdown",
        4 => "testing",
        5 => "dormant",
        6 => "up",
        _ => "unknown",
    }
}

/// Format hardware address bytes as `aa:bb:...`.
pub fn format_mac(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Decode an RTM_NEWLINK / RTM_DELLINK payload.
pub fn decode(payload: &[u8]) -> Option<Link> {
    if payload.len() < IFINFOMSG_LEN {
        return None;
    }
    let mut l = Link {
        hw_type: u16_at(payload, 2),
        index: u32_at(payload, 4),
        flags: u32_at(payload, 8),
        operstate: "unknown",
        ..Default::default()
    };
    for (ty, v) in attrs(&payload[IFINFOMSG_LEN..]) {
        match ty {
            IFLA_IFNAME => l.name = c_string(v),
            IFLA_ADDRESS => l.mac = Some(format_mac(v)),
            IFLA_PERM_ADDRESS => l.perm_mac = Some(format_mac(v)),
            IFLA_BROADCAST => l.broadcast = Some(format_mac(v)),
            IFLA_MTU => l.mtu = as_u32(v).unwrap_or(0),
            IFLA_MIN_MTU => l.min_mtu = as_u32(v),
            IFLA_MAX_MTU => l.max_mtu = as_u32(v),
            IFLA_MASTER => l.master = as_u32(v),
            IFLA_LINK => l.parent = as_u32(v),
            IFLA_TXQLEN => l.txqlen = as_u32(v),
            IFLA_OPERSTATE => l.operstate = operstate_name(v.first().copied().unwrap_or(0)),
            IFLA_CARRIER => l.carrier = v.first().map(|&c| c != 0),
            IFLA_IFALIAS => l.alias = Some(c_string(v)).filter(|a| !a.is_empty()),
            IFLA_LINKINFO => (l.kind, l.info) = decode_linkinfo(v),
            _ => {}
        }
    }
    Some(l)
}

fn ifinfomsg(index: u32, flags: u32, change: u32) -> [u8; IFINFOMSG_LEN] {
    let mut h = [0u8; IFINFOMSG_LEN];
    h[0] = libc::AF_UNSPEC as u8;
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    h[8..12].copy_from_slice(&flags.to_ne_bytes());
    h[12..16].copy_from_slice(&change.to_ne_bytes());
    h
}

/// The RTM_GETLINK dump request.
pub fn dump_request() -> MsgBuilder {
    MsgBuilder::new(RTM_GETLINK, NLM_F_DUMP).header(&ifinfomsg(0, 0, 0))
}

/// RTM_SETLINK addressing the link by name (the kernel answers ENODEV when it
/// does not exist), changing IFF_UP.
pub fn set_up_request(name: &str, up: bool) -> MsgBuilder {
    let flags = if up { libc::IFF_UP as u32 } else { 0 };
    MsgBuilder::new(RTM_SETLINK, NLM_F_ACK)
        .header(&ifinfomsg(0, flags, libc::IFF_UP as u32))
        .attr_str(IFLA_IFNAME, name)
}

/// RTM_SETLINK setting the MTU of the link called `name`.
pub fn set_mtu_request(name: &str, mtu: u32) -> MsgBuilder {
    MsgBuilder::new(RTM_SETLINK, NLM_F_ACK)
        .header(&ifinfomsg(0, 0, 0))
        .attr_str(IFLA_IFNAME, name)
        .attr_u32(IFLA_MTU, mtu)
}

/// List every link.
pub fn list(sock: &NlSocket) -> SysResult<Vec<Link>> {
    let msgs = sock.dump(dump_request, "RTM_GETLINK")?;
    Ok(msgs
        .iter()
        .filter(|m| m.msg_type == RTM_NEWLINK)
        .filter_map(|m| decode(&m.payload))
        .collect())
}

/// Set a link administratively up or down. Idempotent: already in that state
/// is success. A missing link is ENODEV.
pub fn set_up(sock: &NlSocket, name: &str, up: bool) -> SysResult<()> {
    check_name("RTM_SETLINK", name)?;
    sock.request(set_up_request(name, up), "RTM_SETLINK", name)
}

/// Set a link's MTU. Idempotent; out-of-range is EINVAL, a missing link ENODEV.
pub fn set_mtu(sock: &NlSocket, name: &str, mtu: u32) -> SysResult<()> {
    check_name("RTM_SETLINK", name)?;
    sock.request(set_mtu_request(name, mtu), "RTM_SETLINK", name)
}

/// Reject names the kernel could never hold (it would answer EINVAL anyway,
/// but with a less helpful message).
pub fn check_name(op: &str, name: &str) -> SysResult<()> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(SysErr::new(
            op,
            libc::EINVAL,
            format!("bad link name {name:?}"),
        ));
    }
    Ok(())
}

/// Resolve a link name to its index; ENODEV when there is none.
pub fn index_of(op: &str, name: &str) -> SysResult<u32> {
    check_name(op, name)?;
    let c = std::ffi::CString::new(name).map_err(|_| SysErr::new(op, libc::EINVAL, name))?;
    // SAFETY: c is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(SysErr::new(op, libc::ENODEV, name));
    }
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::super::message::{parse_messages, NLMSG_HDRLEN};
    use super::*;

    #[test]
    fn decodes_a_veth_link() {
        let msg = MsgBuilder::new(RTM_NEWLINK, 0)
            .header(&{
                let mut h = ifinfomsg(7, 0x11043, 0);
                h[2..4].copy_from_slice(&1u16.to_ne_bytes());
                h
            })
            .attr_str(IFLA_IFNAME, "veth0")
            .attr(IFLA_ADDRESS, &[2, 0, 0, 0, 0, 0xab])
            .attr(IFLA_PERM_ADDRESS, &[2, 0, 0, 0, 0, 0xcd])
            .attr_u32(IFLA_MTU, 1400)
            .attr(IFLA_OPERSTATE, &[6])
            .attr_u32(IFLA_MASTER, 3)
            .attr_u32(IFLA_LINK, 8)
            .attr_str(IFLA_IFALIAS, "machined")
            .begin_nest(IFLA_LINKINFO)
            .attr_str(1, "veth")
            .end_nest()
            .finish(1);
        let m = parse_messages(&msg).unwrap();
        let l = decode(m[0].payload).unwrap();
        assert_eq!(l.index, 7);
        assert_eq!(l.name, "veth0");
        assert_eq!(l.hw_type, 1);
        assert_eq!(l.mac.as_deref(), Some("02:00:00:00:00:ab"));
        assert_eq!(l.perm_mac.as_deref(), Some("02:00:00:00:00:cd"));
        assert_eq!(l.mtu, 1400);
        assert_eq!(l.operstate, "up");
        assert_eq!(l.master, Some(3));
        assert_eq!(l.parent, Some(8));
        assert_eq!(l.kind.as_deref(), Some("veth"));
        assert_eq!(l.alias.as_deref(), Some("machined"));
        assert_eq!(l.flags, 0x11043);
    }

    #[test]
    fn decodes_a_vlan_with_its_id() {
        let msg = MsgBuilder::new(RTM_NEWLINK, 0)
            .header(&ifinfomsg(9, 0, 0))
            .attr_str(IFLA_IFNAME, "bond0.42")
            .begin_nest(IFLA_LINKINFO)
            .attr_str(1, "vlan")
            .begin_nest(2)
            .attr(1, &42u16.to_ne_bytes())
            .end_nest()
            .end_nest()
            .finish(1);
        let m = parse_messages(&msg).unwrap();
        let l = decode(m[0].payload).unwrap();
        assert_eq!(l.kind.as_deref(), Some("vlan"));
        assert_eq!(l.info.vlan_id, Some(42));
        assert_eq!(l.alias, None);
    }

    #[test]
    fn set_requests_address_by_name() {
        let msg = set_up_request("eth0", true).finish(5);
        let m = parse_messages(&msg).unwrap();
        assert_eq!(m[0].msg_type, RTM_SETLINK);
        assert_eq!(
            u32_at(m[0].payload, 4),
            0,
            "index 0: kernel resolves IFLA_IFNAME"
        );
        assert_eq!(u32_at(m[0].payload, 8), libc::IFF_UP as u32);
        assert_eq!(u32_at(m[0].payload, 12), libc::IFF_UP as u32);
        let a: Vec<_> = attrs(&m[0].payload[IFINFOMSG_LEN..]).collect();
        assert_eq!(c_string(a[0].1), "eth0");
        let down = set_up_request("eth0", false).finish(6);
        assert_eq!(u32_at(&down, NLMSG_HDRLEN + 8), 0);
        let mtu = set_mtu_request("eth0", 9000).finish(7);
        let m = parse_messages(&mtu).unwrap();
        let a: Vec<_> = attrs(&m[0].payload[IFINFOMSG_LEN..]).collect();
        assert_eq!(as_u32(a[1].1), Some(9000));
    }

    #[test]
    fn rejects_impossible_names() {
        assert_eq!(check_name("x", "").unwrap_err().errno, libc::EINVAL);
        assert_eq!(
            check_name("x", "a-very-long-interface-name")
                .unwrap_err()
                .errno,
            libc::EINVAL
        );
        assert!(check_name("x", "eth0").is_ok());
    }
}
