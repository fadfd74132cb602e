//! Routes (RTM_*ROUTE): decode `rtmsg` + RTA_* attributes, list, add and
//! delete IPv4/IPv6 routes with metric and table. Multipath routes are listed
//! with their first-level attributes only.

use super::addr::{ip_bytes, ip_from};
use super::link::index_of;
use super::message::{
    as_u32, attrs, u32_at, MsgBuilder, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL,
};
use super::socket::NlSocket;
use crate::error::{SysErr, SysResult};
use std::net::IpAddr;

pub const RTM_NEWROUTE: u16 = 24;
pub const RTM_DELROUTE: u16 = 25;
pub const RTM_GETROUTE: u16 = 26;

const RTA_DST: u16 = 1;
const RTA_SRC: u16 = 2;
const RTA_OIF: u16 = 4;
const RTA_GATEWAY: u16 = 5;
const RTA_PRIORITY: u16 = 6;
const RTA_PREFSRC: u16 = 7;
const RTA_TABLE: u16 = 15;

/// Size of `struct rtmsg`.
pub const RTMSG_LEN: usize = 12;
pub const RT_TABLE_MAIN: u32 = 254;
pub const RTPROT_STATIC: u8 = 4;
pub const RT_SCOPE_UNIVERSE: u8 = 0;
pub const RT_SCOPE_LINK: u8 = 253;
pub const RT_SCOPE_NOWHERE: u8 = 255;
pub const RTN_UNICAST: u8 = 1;

/// One route as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub family: u8,
    /// None for a default route.
    pub dst: Option<IpAddr>,
    pub dst_len: u8,
    pub src: Option<IpAddr>,
    pub src_len: u8,
    pub gateway: Option<IpAddr>,
    pub oif: Option<u32>,
    pub priority: Option<u32>,
    pub prefsrc: Option<IpAddr>,
    pub table: u32,
    /// RTPROT_*: 2 kernel, 3 boot, 4 static, 16 dhcp...
    pub protocol: u8,
    pub scope: u8,
    /// RTN_*: 1 unicast, 2 local, 3 broadcast, 6 blackhole...
    pub route_type: u8,
    pub flags: u32,
}

/// What to add or delete. Unset fields take the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RouteSpec {
    /// AF_INET or AF_INET6.
    pub family: u8,
    pub dst: Option<IpAddr>,
    pub dst_len: u8,
    pub gateway: Option<IpAddr>,
    pub link: Option<String>,
    pub metric: Option<u32>,
    /// Default: main (254).
    pub table: Option<u32>,
    /// Default: static (4) when adding; any when deleting.
    pub protocol: Option<u8>,
    /// Default: link when there is no gateway but a link, else universe.
    pub scope: Option<u8>,
    /// Default: unicast.
    pub route_type: Option<u8>,
    pub prefsrc: Option<IpAddr>,
}

/// Decode an RTM_NEWROUTE / RTM_DELROUTE payload.
pub fn decode(p: &[u8]) -> Option<Route> {
    if p.len() < RTMSG_LEN {
        return None;
    }
    let family = p[0];
    let mut r = Route {
        family,
        dst: None,
        dst_len: p[1],
        src: None,
        src_len: p[2],
        gateway: None,
        oif: None,
        priority: None,
        prefsrc: None,
        table: p[4] as u32,
        protocol: p[5],
        scope: p[6],
        route_type: p[7],
        flags: u32_at(p, 8),
    };
    for (ty, v) in attrs(&p[RTMSG_LEN..]) {
        match ty {
            RTA_DST => r.dst = ip_from(family, v),
            RTA_SRC => r.src = ip_from(family, v),
            RTA_GATEWAY => r.gateway = ip_from(family, v),
            RTA_PREFSRC => r.prefsrc = ip_from(family, v),
            RTA_OIF => r.oif = as_u32(v),
            RTA_PRIORITY => r.priority = as_u32(v),
            RTA_TABLE => r.table = as_u32(v).unwrap_or(r.table),
            _ => {}
        }
    }
    Some(r)
}

/// The RTM_GETROUTE dump request (all families, all tables).
pub fn dump_request() -> MsgBuilder {
    MsgBuilder::new(RTM_GETROUTE, NLM_F_DUMP).header(&[0u8; RTMSG_LEN])
}

fn check(op: &str, spec: &RouteSpec) -> SysResult<()> {
    let v6 = match spec.family as i32 {
        libc::AF_INET => false,
        libc::AF_INET6 => true,
        _ => return Err(SysErr::new(op, libc::EAFNOSUPPORT, describe(spec))),
    };
    let max = if v6 { 128 } else { 32 };
    let ips = [&spec.dst, &spec.gateway, &spec.prefsrc];
    let wrong = |ip: &IpAddr| ip.is_ipv6() != v6;
    if spec.dst_len > max || ips.iter().any(|ip| ip.as_ref().is_some_and(wrong)) {
        return Err(SysErr::new(op, libc::EINVAL, describe(spec)));
    }
    Ok(())
}

/// `10.1.0.0/24 via 10.0.0.254 dev eth0 metric 100 table 254`, for errors.
pub fn describe(spec: &RouteSpec) -> String {
    let mut s = match &spec.dst {
        Some(d) => format!("{d}/{}", spec.dst_len),
        None => "default".to_string(),
    };
    if let Some(g) = &spec.gateway {
        s += &format!(" via {g}");
    }
    if let Some(l) = &spec.link {
        s += &format!(" dev {l}");
    }
    if let Some(m) = spec.metric {
        s += &format!(" metric {m}");
    }
    s + &format!(" table {}", spec.table.unwrap_or(RT_TABLE_MAIN))
}

/// Build RTM_NEWROUTE (create, exclusive) or RTM_DELROUTE for `spec`, with
/// `oif` already resolved from `spec.link`.
pub fn change_request(new: bool, spec: &RouteSpec, oif: Option<u32>) -> MsgBuilder {
    let table = spec.table.unwrap_or(RT_TABLE_MAIN);
    let mut h = [0u8; RTMSG_LEN];
    h[0] = spec.family;
    h[1] = spec.dst_len;
    h[4] = if table < 256 { table as u8 } else { 0 };
    let (ty, flags) = if new {
        h[5] = spec.protocol.unwrap_or(RTPROT_STATIC);
        h[6] = spec
            .scope
            .unwrap_or(if spec.gateway.is_none() && oif.is_some() {
                RT_SCOPE_LINK
            } else {
                RT_SCOPE_UNIVERSE
            });
        h[7] = spec.route_type.unwrap_or(RTN_UNICAST);
        (RTM_NEWROUTE, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL)
    } else {
        h[5] = spec.protocol.unwrap_or(0);
        h[6] = spec.scope.unwrap_or(RT_SCOPE_NOWHERE);
        h[7] = spec.route_type.unwrap_or(0);
        (RTM_DELROUTE, NLM_F_ACK)
    };
    let mut m = MsgBuilder::new(ty, flags)
        .header(&h)
        .attr_u32(RTA_TABLE, table);
    if let Some(d) = &spec.dst {
        m = m.attr(RTA_DST, &ip_bytes(d).1);
    }
    if let Some(g) = &spec.gateway {
        m = m.attr(RTA_GATEWAY, &ip_bytes(g).1);
    }
    if let Some(p) = &spec.prefsrc {
        m = m.attr(RTA_PREFSRC, &ip_bytes(p).1);
    }
    if let Some(o) = oif {
        m = m.attr_u32(RTA_OIF, o);
    }
    if let Some(p) = spec.metric {
        m = m.attr_u32(RTA_PRIORITY, p);
    }
    m
}

/// List routes of every family and table.
pub fn list(sock: &NlSocket) -> SysResult<Vec<Route>> {
    let msgs = sock.dump(dump_request, "RTM_GETROUTE")?;
    Ok(msgs
        .iter()
        .filter(|m| m.msg_type == RTM_NEWROUTE)
        .filter_map(|m| decode(&m.payload))
        .collect())
}

fn oif_of(op: &str, spec: &RouteSpec) -> SysResult<Option<u32>> {
    spec.link.as_deref().map(|l| index_of(op, l)).transpose()
}

/// Add a route. An identical route (same dst, table, metric, tos) is EEXIST;
/// an unreachable gateway is ENETUNREACH; a missing link ENODEV.
pub fn add(sock: &NlSocket, spec: &RouteSpec) -> SysResult<()> {
    check("RTM_NEWROUTE", spec)?;
    let oif = oif_of("RTM_NEWROUTE", spec)?;
    sock.request(
        change_request(true, spec, oif),
        "RTM_NEWROUTE",
        &describe(spec),
    )
}

/// Delete a route matching the given fields. No match is ESRCH.
pub fn delete(sock: &NlSocket, spec: &RouteSpec) -> SysResult<()> {
    check("RTM_DELROUTE", spec)?;
    let oif = oif_of("RTM_DELROUTE", spec)?;
    sock.request(
        change_request(false, spec, oif),
        "RTM_DELROUTE",
        &describe(spec),
    )
}

#[cfg(test)]
mod tests {
    use super::super::message::parse_messages;
    use super::*;

    fn spec() -> RouteSpec {
        RouteSpec {
            family: libc::AF_INET as u8,
            dst: Some("10.1.0.0".parse().unwrap()),
            dst_len: 24,
            gateway: Some("10.0.0.254".parse().unwrap()),
            metric: Some(100),
            table: Some(1000),
            ..Default::default()
        }
    }

    #[test]
    fn round_trips_an_add() {
        let msg = change_request(true, &spec(), Some(3)).finish(1);
        let m = parse_messages(&msg).unwrap();
        let r = decode(m[0].payload).unwrap();
        assert_eq!(r.dst.unwrap().to_string(), "10.1.0.0");
        assert_eq!(r.dst_len, 24);
        assert_eq!(r.gateway.unwrap().to_string(), "10.0.0.254");
        assert_eq!(r.oif, Some(3));
        assert_eq!(r.priority, Some(100));
        assert_eq!(r.table, 1000, "tables above 255 travel in RTA_TABLE");
        assert_eq!(m[0].payload[4], 0);
        assert_eq!(r.protocol, RTPROT_STATIC);
        assert_eq!(r.scope, RT_SCOPE_UNIVERSE);
        assert_eq!(r.route_type, RTN_UNICAST);
    }

    #[test]
    fn link_scope_without_gateway_and_wildcards_on_delete() {
        let s = RouteSpec {
            gateway: None,
            table: None,
            ..spec()
        };
        let add = change_request(true, &s, Some(2)).finish(1);
        assert_eq!(add[16 + 6], RT_SCOPE_LINK);
        assert_eq!(add[16 + 4], 254);
        let del = change_request(false, &s, Some(2)).finish(2);
        let m = parse_messages(&del).unwrap();
        assert_eq!(m[0].msg_type, RTM_DELROUTE);
        assert_eq!(m[0].payload[5], 0, "any protocol");
        assert_eq!(m[0].payload[6], RT_SCOPE_NOWHERE, "any scope");
    }

    #[test]
    fn ipv6_default_route() {
        let s = RouteSpec {
            family: libc::AF_INET6 as u8,
            gateway: Some("fe80::1".parse().unwrap()),
            link: Some("eth0".into()),
            ..Default::default()
        };
        assert!(check("x", &s).is_ok());
        let msg = change_request(true, &s, Some(5)).finish(1);
        let r = decode(parse_messages(&msg).unwrap()[0].payload).unwrap();
        assert_eq!(r.dst, None);
        assert_eq!(r.family, libc::AF_INET6 as u8);
        assert_eq!(describe(&s), "default via fe80::1 dev eth0 table 254");
    }

    #[test]
    fn rejects_mixed_families() {
        let s = RouteSpec {
            family: libc::AF_INET6 as u8,
            ..spec()
        };
        assert_eq!(check("x", &s).unwrap_err().errno, libc::EINVAL);
        let s = RouteSpec {
            family: 99,
            ..spec()
        };
        assert_eq!(check("x", &s).unwrap_err().errno, libc::EAFNOSUPPORT);
    }
}
