//! Virtual links machined creates (RTM_NEWLINK with IFLA_LINKINFO): 802.1Q
//! VLANs, bonds and bridges; deleting them (RTM_DELLINK) and enslaving a link
//! to a master (IFLA_MASTER). Also the decoder of the kind-specific
//! IFLA_INFO_DATA that the link listing reports. Pure codecs first, then the
//! few calls that use a socket. Names of modes and policies are the kernel's
//! own (`ip link` spells them the same), so TypeScript never sees numbers.

use super::link::{
    check_name, format_mac, index_of, IFINFOMSG_LEN, RTM_DELLINK, RTM_NEWLINK, RTM_SETLINK,
};
use super::message::{
    as_u32, attrs, c_string, u16_at, MsgBuilder, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL,
};
use super::socket::NlSocket;
use crate::error::{SysErr, SysResult};

pub const IFLA_IFNAME: u16 = 3;
pub const IFLA_LINK: u16 = 5;
pub const IFLA_MASTER: u16 = 10;
pub const IFLA_LINKINFO: u16 = 18;
pub const IFLA_IFALIAS: u16 = 20;
pub const IFLA_INFO_KIND: u16 = 1;
pub const IFLA_INFO_DATA: u16 = 2;
pub const IFLA_VLAN_ID: u16 = 1;
pub const IFLA_BOND_MODE: u16 = 1;
pub const IFLA_BOND_MIIMON: u16 = 3;
pub const IFLA_BOND_XMIT_HASH_POLICY: u16 = 14;
// The uapi enum (linux/if_link.h) counts on from XMIT_HASH_POLICY (14): RESEND_IGMP,
// NUM_PEER_NOTIF (16), ALL_SLAVES_ACTIVE, MIN_LINKS, LP_INTERVAL, PACKETS_PER_SLAVE,
// AD_LACP_RATE (21), AD_SELECT, AD_INFO (23).
pub const IFLA_BOND_AD_LACP_RATE: u16 = 21;
pub const IFLA_BOND_AD_INFO: u16 = 23;
pub const IFLA_BOND_AD_INFO_AGGREGATOR: u16 = 1;
pub const IFLA_BOND_AD_INFO_NUM_PORTS: u16 = 2;
pub const IFLA_BOND_AD_INFO_PARTNER_MAC: u16 = 5;
pub const IFLA_BR_STP_STATE: u16 = 5;

const BOND_MODES: [&str; 7] = [
    "balance-rr",
    "active-backup",
    "balance-xor",
    "broadcast",
    "802.3ad",
    "balance-tlb",
    "balance-alb",
];
const XMIT_HASH_POLICIES: [&str; 5] = ["layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4"];
const LACP_RATES: [&str; 2] = ["slow", "fast"];

/// What to create. Fields that do not apply to `kind` must be None.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkCreate {
    pub name: String,
    /// `vlan`, `bond` or `bridge`.
    pub kind: String,
    /// A VLAN's parent link (by name).
    pub parent: Option<String>,
    pub vlan_id: Option<u16>,
    pub bond_mode: Option<String>,
    pub miimon: Option<u32>,
    pub lacp_rate: Option<String>,
    pub xmit_hash_policy: Option<String>,
    pub stp: Option<bool>,
    /// IFLA_IFALIAS set right after creation (machined marks its own links).
    pub alias: Option<String>,
}

/// Kind-specific facts decoded from IFLA_INFO_DATA.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KindInfo {
    pub vlan_id: Option<u16>,
    pub bond_mode: Option<String>,
    pub miimon: Option<u32>,
    pub lacp_rate: Option<String>,
    pub xmit_hash_policy: Option<String>,
    pub stp: Option<bool>,
    /// An 802.3ad bond's active aggregator (IFLA_BOND_AD_INFO): its id, how
    /// many ports it holds, and the partner's system MAC (all zeros until a
    /// partner answered LACP).
    pub lacp_aggregator: Option<u16>,
    pub lacp_ports: Option<u16>,
    pub lacp_partner_mac: Option<String>,
}

fn index_in(op: &str, what: &str, table: &[&str], v: &str) -> SysResult<u8> {
    table
        .iter()
        .position(|&x| x == v)
        .map(|i| i as u8)
        .ok_or_else(|| SysErr::new(op, libc::EINVAL, format!("unknown {what} {v:?}")))
}

fn name_at(table: &[&str], v: Option<&u8>) -> Option<String> {
    v.and_then(|&i| table.get(i as usize))
        .map(|s| s.to_string())
}

/// Decode IFLA_INFO_DATA for `kind`; unknown kinds give an empty KindInfo.
pub fn decode_info_data(kind: &str, data: &[u8]) -> KindInfo {
    let mut k = KindInfo::default();
    for (ty, v) in attrs(data) {
        match (kind, ty) {
            ("vlan", IFLA_VLAN_ID) if v.len() >= 2 => k.vlan_id = Some(u16_at(v, 0)),
            ("bond", IFLA_BOND_MODE) => k.bond_mode = name_at(&BOND_MODES, v.first()),
            ("bond", IFLA_BOND_MIIMON) => k.miimon = as_u32(v),
            ("bond", IFLA_BOND_AD_LACP_RATE) => k.lacp_rate = name_at(&LACP_RATES, v.first()),
            ("bond", IFLA_BOND_XMIT_HASH_POLICY) => {
                k.xmit_hash_policy = name_at(&XMIT_HASH_POLICIES, v.first())
            }
            ("bridge", IFLA_BR_STP_STATE) => k.stp = as_u32(v).map(|s| s != 0),
            ("bond", IFLA_BOND_AD_INFO) => decode_ad_info(v, &mut k),
            _ => {}
        }
    }
    k
}

/// The nested IFLA_BOND_AD_INFO (present only while an aggregator is active).
fn decode_ad_info(v: &[u8], k: &mut KindInfo) {
    for (ty, a) in attrs(v) {
        match ty {
            IFLA_BOND_AD_INFO_AGGREGATOR if a.len() >= 2 => k.lacp_aggregator = Some(u16_at(a, 0)),
            IFLA_BOND_AD_INFO_NUM_PORTS if a.len() >= 2 => k.lacp_ports = Some(u16_at(a, 0)),
            IFLA_BOND_AD_INFO_PARTNER_MAC if a.len() == 6 => {
                k.lacp_partner_mac = Some(format_mac(a))
            }
            _ => {}
        }
    }
}

/// Decode a whole IFLA_LINKINFO nest: the kind and its data.
pub fn decode_linkinfo(v: &[u8]) -> (Option<String>, KindInfo) {
    let mut kind = None;
    let mut data: &[u8] = &[];
    for (ty, iv) in attrs(v) {
        match ty {
            IFLA_INFO_KIND => kind = Some(c_string(iv)),
            IFLA_INFO_DATA => data = iv,
            _ => {}
        }
    }
    let info = kind
        .as_deref()
        .map(|k| decode_info_data(k, data))
        .unwrap_or_default();
    (kind, info)
}

fn header() -> [u8; IFINFOMSG_LEN] {
    let mut h = [0u8; IFINFOMSG_LEN];
    h[0] = libc::AF_UNSPEC as u8;
    h
}

/// The RTM_NEWLINK request (NLM_F_CREATE | NLM_F_EXCL: an existing name is
/// EEXIST). `parent_index` is the VLAN parent's index, resolved by the caller.
pub fn create_request(c: &LinkCreate, parent_index: Option<u32>) -> SysResult<MsgBuilder> {
    let op = "RTM_NEWLINK";
    let mut m = MsgBuilder::new(RTM_NEWLINK, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL)
        .header(&header())
        .attr_str(IFLA_IFNAME, &c.name);
    if let Some(p) = parent_index {
        m = m.attr_u32(IFLA_LINK, p);
    }
    m = m
        .begin_nest(IFLA_LINKINFO)
        .attr_str(IFLA_INFO_KIND, &c.kind);
    m = m.begin_nest(IFLA_INFO_DATA);
    match c.kind.as_str() {
        "vlan" => {
            let id = c.vlan_id.filter(|&i| (1..=4094).contains(&i));
            let id = id.ok_or_else(|| SysErr::new(op, libc::EINVAL, "VLAN id not in 1..4094"))?;
            m = m.attr(IFLA_VLAN_ID, &id.to_ne_bytes());
        }
        "bond" => {
            if let Some(mode) = &c.bond_mode {
                m = m.attr(
                    IFLA_BOND_MODE,
                    &[index_in(op, "bond mode", &BOND_MODES, mode)?],
                );
            }
            if let Some(ms) = c.miimon {
                m = m.attr_u32(IFLA_BOND_MIIMON, ms);
            }
            if let Some(r) = &c.lacp_rate {
                m = m.attr(
                    IFLA_BOND_AD_LACP_RATE,
                    &[index_in(op, "LACP rate", &LACP_RATES, r)?],
                );
            }
            if let Some(p) = &c.xmit_hash_policy {
                let v = index_in(op, "xmit hash policy", &XMIT_HASH_POLICIES, p)?;
                m = m.attr(IFLA_BOND_XMIT_HASH_POLICY, &[v]);
            }
        }
        "bridge" => {
            if let Some(stp) = c.stp {
                m = m.attr_u32(IFLA_BR_STP_STATE, stp as u32);
            }
        }
        // Keys and peers go over the wireguard genetlink family (`wg`), not rtnetlink.
        "wireguard" => {}
        k => {
            return Err(SysErr::new(
                op,
                libc::EOPNOTSUPP,
                format!("link kind {k:?}"),
            ))
        }
    }
    Ok(m.end_nest().end_nest())
}

/// RTM_SETLINK setting the alias of the link called `name`.
pub fn set_alias_request(name: &str, alias: &str) -> MsgBuilder {
    MsgBuilder::new(RTM_SETLINK, NLM_F_ACK)
        .header(&header())
        .attr_str(IFLA_IFNAME, name)
        .attr_str(IFLA_IFALIAS, alias)
}

/// RTM_DELLINK of the link called `name`.
pub fn delete_request(name: &str) -> MsgBuilder {
    MsgBuilder::new(RTM_DELLINK, NLM_F_ACK)
        .header(&header())
        .attr_str(IFLA_IFNAME, name)
}

/// RTM_SETLINK enslaving `name` to the link with index `master` (0 releases).
pub fn set_master_request(name: &str, master: u32) -> MsgBuilder {
    MsgBuilder::new(RTM_SETLINK, NLM_F_ACK)
        .header(&header())
        .attr_str(IFLA_IFNAME, name)
        .attr_u32(IFLA_MASTER, master)
}

/// Create a link. EEXIST when the name is taken, ENODEV when a VLAN's parent
/// is missing, EOPNOTSUPP when the kernel lacks the kind's driver. With an
/// alias, a failure to set it deletes the new link again, so a link machined
/// created is always marked.
pub fn create(sock: &NlSocket, c: &LinkCreate) -> SysResult<()> {
    let op = "RTM_NEWLINK";
    check_name(op, &c.name)?;
    let parent = match (&c.kind[..], &c.parent) {
        ("vlan", Some(p)) => Some(index_of(op, p)?),
        ("vlan", None) => return Err(SysErr::new(op, libc::EINVAL, "a VLAN needs a parent")),
        _ => None,
    };
    sock.request(create_request(c, parent)?, op, &c.name)?;
    if let Some(alias) = &c.alias {
        if let Err(e) = sock.request(set_alias_request(&c.name, alias), "RTM_SETLINK", &c.name) {
            let _ = sock.request(delete_request(&c.name), "RTM_DELLINK", &c.name);
            return Err(e);
        }
    }
    Ok(())
}

/// Delete a link by name (ENODEV when missing). Deleting a master releases
/// its ports; deleting a VLAN's parent deletes the VLAN.
pub fn delete(sock: &NlSocket, name: &str) -> SysResult<()> {
    check_name("RTM_DELLINK", name)?;
    sock.request(delete_request(name), "RTM_DELLINK", name)
}

/// Enslave `name` to `master`, or release it with None. ENODEV when either
/// is missing; the kernel answers EPERM for a bond port that is up and
/// EBUSY for a link that already has another master.
pub fn set_master(sock: &NlSocket, name: &str, master: Option<&str>) -> SysResult<()> {
    let op = "RTM_SETLINK";
    check_name(op, name)?;
    let index = match master {
        Some(m) => index_of(op, m)?,
        None => 0,
    };
    sock.request(set_master_request(name, index), op, name)
}

#[cfg(test)]
mod tests {
    use super::super::message::{parse_messages, u32_at};
    use super::*;

    fn body(msg: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let m = parse_messages(msg).unwrap();
        attrs(&m[0].payload[IFINFOMSG_LEN..])
            .map(|(t, v)| (t, v.to_vec()))
            .collect()
    }

    fn linkinfo(a: &[(u16, Vec<u8>)]) -> (Option<String>, KindInfo) {
        decode_linkinfo(&a.iter().find(|(t, _)| *t == IFLA_LINKINFO).unwrap().1)
    }

    #[test]
    fn encodes_a_vlan_on_its_parent() {
        let c = LinkCreate {
            name: "bond0.42".into(),
            kind: "vlan".into(),
            parent: Some("bond0".into()),
            vlan_id: Some(42),
            ..Default::default()
        };
        let msg = create_request(&c, Some(9)).unwrap().finish(1);
        let m = parse_messages(&msg).unwrap();
        assert_eq!(m[0].msg_type, RTM_NEWLINK);
        assert_eq!(m[0].flags, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL | 1);
        let a = body(&msg);
        assert_eq!(c_string(&a[0].1), "bond0.42");
        assert_eq!((a[1].0, as_u32(&a[1].1)), (IFLA_LINK, Some(9)));
        let (kind, info) = linkinfo(&a);
        assert_eq!(kind.as_deref(), Some("vlan"));
        assert_eq!(info.vlan_id, Some(42));
    }

    #[test]
    fn encodes_a_bond_with_its_options() {
        let c = LinkCreate {
            name: "bond0".into(),
            kind: "bond".into(),
            bond_mode: Some("802.3ad".into()),
            miimon: Some(100),
            lacp_rate: Some("fast".into()),
            xmit_hash_policy: Some("layer3+4".into()),
            ..Default::default()
        };
        let a = body(&create_request(&c, None).unwrap().finish(1));
        assert!(a.iter().all(|(t, _)| *t != IFLA_LINK));
        let (kind, info) = linkinfo(&a);
        assert_eq!(kind.as_deref(), Some("bond"));
        assert_eq!(info.bond_mode.as_deref(), Some("802.3ad"));
        assert_eq!(info.miimon, Some(100));
        assert_eq!(info.lacp_rate.as_deref(), Some("fast"));
        assert_eq!(info.xmit_hash_policy.as_deref(), Some("layer3+4"));
        // The wire values are the kernel's enum numbers.
        let li = &a.iter().find(|(t, _)| *t == IFLA_LINKINFO).unwrap().1;
        let data = attrs(li).find(|(t, _)| *t == IFLA_INFO_DATA).unwrap().1;
        let raw: Vec<_> = attrs(data).map(|(t, v)| (t, v.to_vec())).collect();
        // Literal numbers from linux/if_link.h, not the constants: 16 (NUM_PEER_NOTIF) once
        // stood for the LACP rate, and a round trip through our own decoder could not see it.
        assert!(raw.contains(&(1, vec![4])), "IFLA_BOND_MODE");
        assert!(raw.contains(&(21, vec![1])), "IFLA_BOND_AD_LACP_RATE");
        assert!(raw.contains(&(14, vec![1])), "IFLA_BOND_XMIT_HASH_POLICY");
        assert!(
            raw.contains(&(3, 100u32.to_ne_bytes().to_vec())),
            "IFLA_BOND_MIIMON"
        );
        assert!(
            raw.iter().all(|(t, _)| *t != 16),
            "nothing as IFLA_BOND_NUM_PEER_NOTIF"
        );
    }

    #[test]
    fn encodes_a_bridge_with_stp() {
        let c = LinkCreate {
            name: "br0".into(),
            kind: "bridge".into(),
            stp: Some(true),
            ..Default::default()
        };
        let (kind, info) = linkinfo(&body(&create_request(&c, None).unwrap().finish(1)));
        assert_eq!(kind.as_deref(), Some("bridge"));
        assert_eq!(info.stp, Some(true));
    }

    #[test]
    fn encodes_a_wireguard_link() {
        let c = LinkCreate {
            name: "wg0".into(),
            kind: "wireguard".into(),
            ..Default::default()
        };
        let (kind, _) = linkinfo(&body(&create_request(&c, None).unwrap().finish(1)));
        assert_eq!(kind.as_deref(), Some("wireguard"));
    }

    #[test]
    fn refuses_bad_values_before_the_kernel() {
        let bad = |c: LinkCreate| create_request(&c, Some(1)).unwrap_err().errno;
        let vlan = |id| LinkCreate {
            name: "v".into(),
            kind: "vlan".into(),
            vlan_id: Some(id),
            ..Default::default()
        };
        assert_eq!(bad(vlan(0)), libc::EINVAL);
        assert_eq!(bad(vlan(4095)), libc::EINVAL);
        let bond = LinkCreate {
            name: "b".into(),
            kind: "bond".into(),
            bond_mode: Some("802.3".into()),
            ..Default::default()
        };
        assert_eq!(bad(bond), libc::EINVAL);
        let other = LinkCreate {
            name: "x".into(),
            kind: "vxlan".into(),
            ..Default::default()
        };
        assert_eq!(bad(other), libc::EOPNOTSUPP);
    }

    #[test]
    fn encodes_delete_master_and_alias() {
        let d = delete_request("br0").finish(2);
        let m = parse_messages(&d).unwrap();
        assert_eq!(m[0].msg_type, RTM_DELLINK);
        assert_eq!(c_string(&body(&d)[0].1), "br0");
        let s = set_master_request("eth1", 0).finish(3);
        let a = body(&s);
        assert_eq!(u32_at(parse_messages(&s).unwrap()[0].payload, 4), 0);
        assert_eq!((a[1].0, as_u32(&a[1].1)), (IFLA_MASTER, Some(0)));
        let al = body(&set_alias_request("br0", "machined").finish(4));
        assert_eq!(
            (al[1].0, c_string(&al[1].1)),
            (IFLA_IFALIAS, "machined".into())
        );
    }

    #[test]
    fn decodes_the_active_aggregator() {
        let mut ad = MsgBuilder::new(0, 0);
        ad = ad
            .attr(IFLA_BOND_AD_INFO_AGGREGATOR, &2u16.to_ne_bytes())
            .attr(IFLA_BOND_AD_INFO_NUM_PORTS, &2u16.to_ne_bytes())
            .attr(3, &15u16.to_ne_bytes())
            .attr(4, &15u16.to_ne_bytes())
            .attr(IFLA_BOND_AD_INFO_PARTNER_MAC, &[0x52, 0x54, 0, 0x70, 0, 1]);
        let nested = ad.finish(0)[16..].to_vec();
        let msg = MsgBuilder::new(0, 0)
            .attr(IFLA_BOND_MODE, &[4])
            .attr(IFLA_BOND_AD_INFO, &nested)
            .finish(0);
        let info = decode_info_data("bond", &msg[16..]);
        assert_eq!(info.bond_mode.as_deref(), Some("802.3ad"));
        assert_eq!(info.lacp_aggregator, Some(2));
        assert_eq!(info.lacp_ports, Some(2));
        assert_eq!(info.lacp_partner_mac.as_deref(), Some("52:54:00:70:00:01"));
    }

    #[test]
    fn decodes_unknown_values_as_absent() {
        let msg = MsgBuilder::new(0, 0)
            .attr(IFLA_BOND_MODE, &[99])
            .attr_u32(IFLA_BOND_MIIMON, 50)
            .finish(0);
        let info = decode_info_data("bond", &msg[16..]);
        assert_eq!(info.bond_mode, None);
        assert_eq!(info.miimon, Some(50));
        assert_eq!(decode_info_data("veth", &msg[16..]), KindInfo::default());
    }
}
