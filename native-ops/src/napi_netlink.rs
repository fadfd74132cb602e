//! Thin `#[napi]` wrappers over `netlink/`: every call that touches a socket
//! runs on a blocking worker thread and returns a Promise. Objects mirror the
//! plain-Rust types with JavaScript-friendly fields (strings for IPs,
//! `"inet"`/`"inet6"` for families).

use crate::error::{SysErr, SysResult};
use crate::netlink::{addr, dhcp_socket, events, link, route, socket::NlSocket};
use napi::bindgen_prelude::{spawn_blocking, Uint8Array};
use napi_derive::napi;
use std::net::IpAddr;
use std::sync::Arc;

pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> SysResult<T> + Send + 'static,
) -> napi::Result<T> {
    spawn_blocking(f)
        .await
        .map_err(|e| napi::Error::from_reason(format!("worker failed: {e}")))?
        .map_err(napi::Error::from)
}

fn family_name(f: u8) -> String {
    if f as i32 == libc::AF_INET6 {
        "inet6"
    } else {
        "inet"
    }
    .to_string()
}

fn parse_ip(op: &str, s: &str) -> SysResult<IpAddr> {
    s.parse()
        .map_err(|_| SysErr::new(op, libc::EINVAL, format!("bad IP address {s:?}")))
}

fn opt_u8(op: &str, v: Option<u32>) -> SysResult<Option<u8>> {
    v.map(|x| u8::try_from(x).map_err(|_| SysErr::new(op, libc::EINVAL, format!("{x} > 255"))))
        .transpose()
}

/// A network link.
#[napi(object)]
pub struct NlLink {
    pub index: u32,
    pub name: String,
    /// IFLA_INFO_KIND (veth, bridge, ...), absent for physical devices.
    pub kind: Option<String>,
    /// ARPHRD_* (1 ether, 772 loopback).
    pub hw_type: u32,
    pub mac: Option<String>,
    /// IFLA_PERM_ADDRESS: the NIC's own MAC (a bond port's `mac` is the bond's).
    pub perm_mac: Option<String>,
    pub broadcast: Option<String>,
    pub mtu: u32,
    pub min_mtu: Option<u32>,
    pub max_mtu: Option<u32>,
    /// IFF_* bits.
    pub flags: u32,
    pub operstate: String,
    pub carrier: Option<bool>,
    pub master: Option<u32>,
    pub parent: Option<u32>,
    pub txqlen: Option<u32>,
    /// IFLA_IFALIAS; `machined` on links machined created.
    pub alias: Option<String>,
    /// A VLAN's 802.1Q id.
    pub vlan_id: Option<u32>,
    /// A bond's mode (`active-backup`, `802.3ad`...).
    pub bond_mode: Option<String>,
    pub miimon: Option<u32>,
    /// A bond's LACP rate (`slow`, `fast`).
    pub lacp_rate: Option<String>,
    /// A bond's transmit hash policy (`layer2`, `layer3+4`...).
    pub xmit_hash_policy: Option<String>,
    /// A bridge's STP state (on or off).
    pub stp: Option<bool>,
    /// An 802.3ad bond's active aggregator id (IFLA_BOND_AD_INFO).
    pub lacp_aggregator: Option<u32>,
    /// How many ports the active aggregator holds.
    pub lacp_ports: Option<u32>,
    /// The LACP partner's system MAC (all zeros until a partner answered).
    pub lacp_partner_mac: Option<String>,
}

impl From<link::Link> for NlLink {
    fn from(l: link::Link) -> Self {
        Self {
            index: l.index,
            name: l.name,
            kind: l.kind,
            hw_type: l.hw_type as u32,
            mac: l.mac,
            perm_mac: l.perm_mac,
            broadcast: l.broadcast,
            mtu: l.mtu,
            min_mtu: l.min_mtu,
            max_mtu: l.max_mtu,
            flags: l.flags,
            operstate: l.operstate.to_string(),
            carrier: l.carrier,
            master: l.master,
            parent: l.parent,
            txqlen: l.txqlen,
            alias: l.alias,
            vlan_id: l.info.vlan_id.map(u32::from),
            bond_mode: l.info.bond_mode,
            miimon: l.info.miimon,
            lacp_rate: l.info.lacp_rate,
            xmit_hash_policy: l.info.xmit_hash_policy,
            stp: l.info.stp,
            lacp_aggregator: l.info.lacp_aggregator.map(u32::from),
            lacp_ports: l.info.lacp_ports.map(u32::from),
            lacp_partner_mac: l.info.lacp_partner_mac,
        }
    }
}

/// An address on a link.
#[napi(object)]
pub struct NlAddress {
    pub index: u32,
    /// `inet` or `inet6`.
    pub family: String,
    pub address: String,
    pub peer: Option<String>,
    pub prefix_len: u32,
    pub scope: u32,
    /// IFA_F_* bits.
    pub flags: u32,
    pub label: Option<String>,
    pub broadcast: Option<String>,
    pub valid_lft: Option<u32>,
    pub preferred_lft: Option<u32>,
}

impl From<addr::Address> for NlAddress {
    fn from(a: addr::Address) -> Self {
        Self {
            index: a.index,
            family: if a.address.is_ipv6() { "inet6" } else { "inet" }.into(),
            address: a.address.to_string(),
            peer: a.peer.map(|p| p.to_string()),
            prefix_len: a.prefix_len as u32,
            scope: a.scope as u32,
            flags: a.flags,
            label: a.label,
            broadcast: a.broadcast.map(|b| b.to_string()),
            valid_lft: a.valid_lft,
            preferred_lft: a.preferred_lft,
        }
    }
}

/// An address to add or delete.
#[napi(object)]
pub struct NlAddressSpec {
    pub link: String,
    pub address: String,
    pub prefix_len: u32,
    pub scope: Option<u32>,
    pub flags: Option<u32>,
    pub label: Option<String>,
    pub broadcast: Option<String>,
    pub valid_lft: Option<u32>,
    pub preferred_lft: Option<u32>,
}

impl NlAddressSpec {
    fn to_spec(&self, op: &str) -> SysResult<addr::AddressSpec> {
        let broadcast = match &self.broadcast {
            None => None,
            Some(b) => match parse_ip(op, b)? {
                IpAddr::V4(v) => Some(v),
                IpAddr::V6(_) => return Err(SysErr::new(op, libc::EINVAL, "IPv6 broadcast")),
            },
        };
        Ok(addr::AddressSpec {
            link: self.link.clone(),
            address: parse_ip(op, &self.address)?,
            prefix_len: opt_u8(op, Some(self.prefix_len))?.unwrap_or(0),
            scope: opt_u8(op, self.scope)?,
            flags: self.flags,
            label: self.label.clone(),
            broadcast,
            valid_lft: self.valid_lft,
            preferred_lft: self.preferred_lft,
        })
    }
}

/// A route.
#[napi(object)]
pub struct NlRoute {
    pub family: String,
    /// Absent for a default route.
    pub dst: Option<String>,
    pub dst_len: u32,
    pub src: Option<String>,
    pub src_len: u32,
    pub gateway: Option<String>,
    pub oif: Option<u32>,
    /// The metric.
    pub priority: Option<u32>,
    pub prefsrc: Option<String>,
    pub table: u32,
    pub protocol: u32,
    pub scope: u32,
    pub route_type: u32,
    pub flags: u32,
}

impl From<route::Route> for NlRoute {
    fn from(r: route::Route) -> Self {
        let s = |ip: Option<IpAddr>| ip.map(|i| i.to_string());
        Self {
            family: family_name(r.family),
            dst: s(r.dst),
            dst_len: r.dst_len as u32,
            src: s(r.src),
            src_len: r.src_len as u32,
            gateway: s(r.gateway),
            oif: r.oif,
            priority: r.priority,
            prefsrc: s(r.prefsrc),
            table: r.table,
            protocol: r.protocol as u32,
            scope: r.scope as u32,
            route_type: r.route_type as u32,
            flags: r.flags,
        }
    }
}

/// A route to add or delete; see `route::RouteSpec` for defaults.
#[napi(object)]
pub struct NlRouteSpec {
    /// `inet` or `inet6`.
    pub family: String,
    pub dst: Option<String>,
    pub dst_len: Option<u32>,
    pub gateway: Option<String>,
    pub link: Option<String>,
    pub metric: Option<u32>,
    pub table: Option<u32>,
    pub protocol: Option<u32>,
    pub scope: Option<u32>,
    pub route_type: Option<u32>,
    pub prefsrc: Option<String>,
}

impl NlRouteSpec {
    fn to_spec(&self, op: &str) -> SysResult<route::RouteSpec> {
        let ip = |v: &Option<String>| v.as_deref().map(|s| parse_ip(op, s)).transpose();
        let family = match self.family.as_str() {
            "inet" => libc::AF_INET as u8,
            "inet6" => libc::AF_INET6 as u8,
            f => return Err(SysErr::new(op, libc::EAFNOSUPPORT, f)),
        };
        Ok(route::RouteSpec {
            family,
            dst: ip(&self.dst)?,
            dst_len: opt_u8(op, self.dst_len)?.unwrap_or(0),
            gateway: ip(&self.gateway)?,
            link: self.link.clone(),
            metric: self.metric,
            table: self.table,
            protocol: opt_u8(op, self.protocol)?,
            scope: opt_u8(op, self.scope)?,
            route_type: opt_u8(op, self.route_type)?,
            prefsrc: ip(&self.prefsrc)?,
        })
    }
}

/// List every link.
#[napi]
pub async fn netlink_list_links() -> napi::Result<Vec<NlLink>> {
    let links = blocking(|| link::list(&NlSocket::open(&[])?)).await?;
    Ok(links.into_iter().map(Into::into).collect())
}

/// List every address of every family.
#[napi]
pub async fn netlink_list_addresses() -> napi::Result<Vec<NlAddress>> {
    let list = blocking(|| addr::list(&NlSocket::open(&[])?, None)).await?;
    Ok(list.into_iter().map(Into::into).collect())
}

/// List every route of every family and table.
#[napi]
pub async fn netlink_list_routes() -> napi::Result<Vec<NlRoute>> {
    let list = blocking(|| route::list(&NlSocket::open(&[])?)).await?;
    Ok(list.into_iter().map(Into::into).collect())
}

/// Set a link administratively up or down (ENODEV when missing).
#[napi]
pub async fn netlink_set_link_up(name: String, up: bool) -> napi::Result<()> {
    blocking(move || link::set_up(&NlSocket::open(&[])?, &name, up)).await
}

/// Set a link's MTU (EINVAL out of range, ENODEV when missing).
#[napi]
pub async fn netlink_set_link_mtu(name: String, mtu: u32) -> napi::Result<()> {
    blocking(move || link::set_mtu(&NlSocket::open(&[])?, &name, mtu)).await
}

/// Add an address (EEXIST when present).
#[napi]
pub async fn netlink_add_address(spec: NlAddressSpec) -> napi::Result<()> {
    let s = spec.to_spec("RTM_NEWADDR")?;
    blocking(move || addr::add(&NlSocket::open(&[])?, &s)).await
}

/// Delete an address (EADDRNOTAVAIL when absent).
#[napi]
pub async fn netlink_delete_address(spec: NlAddressSpec) -> napi::Result<()> {
    let s = spec.to_spec("RTM_DELADDR")?;
    blocking(move || addr::delete(&NlSocket::open(&[])?, &s)).await
}

/// Add a route (EEXIST when present).
#[napi]
pub async fn netlink_add_route(spec: NlRouteSpec) -> napi::Result<()> {
    let s = spec.to_spec("RTM_NEWROUTE")?;
    blocking(move || route::add(&NlSocket::open(&[])?, &s)).await
}

/// Delete a route (ESRCH when absent).
#[napi]
pub async fn netlink_delete_route(spec: NlRouteSpec) -> napi::Result<()> {
    let s = spec.to_spec("RTM_DELROUTE")?;
    blocking(move || route::delete(&NlSocket::open(&[])?, &s)).await
}

/// One change event; exactly one of `link`, `address`, `route` is set.
#[napi(object)]
pub struct NlEvent {
    /// `link`, `address` or `route`.
    pub kind: String,
    pub removed: bool,
    pub link: Option<NlLink>,
    pub address: Option<NlAddress>,
    pub route: Option<NlRoute>,
}

impl From<events::Event> for NlEvent {
    fn from(e: events::Event) -> Self {
        let mut out = Self {
            kind: String::new(),
            removed: false,
            link: None,
            address: None,
            route: None,
        };
        match e {
            events::Event::Link { removed, link } => {
                out.kind = "link".into();
                out.removed = removed;
                out.link = Some((*link).into());
            }
            events::Event::Address { removed, address } => {
                out.kind = "address".into();
                out.removed = removed;
                out.address = Some(address.into());
            }
            events::Event::Route { removed, route } => {
                out.kind = "route".into();
                out.removed = removed;
                out.route = Some(route.into());
            }
        }
        out
    }
}

/// A netlink event subscription. `next` resolves with a batch of events,
/// an empty batch on timeout, or null once closed.
#[napi]
pub struct NetlinkSubscription {
    inner: Arc<events::Subscription>,
}

#[napi]
impl NetlinkSubscription {
    /// Wait up to `timeout_ms` for the next batch.
    #[napi]
    pub async fn next(&self, timeout_ms: u32) -> napi::Result<Option<Vec<NlEvent>>> {
        let inner = self.inner.clone();
        let t = timeout_ms.min(i32::MAX as u32) as i32;
        match blocking(move || inner.wait(t)).await? {
            events::Wait::Events(ev) => Ok(Some(ev.into_iter().map(Into::into).collect())),
            events::Wait::TimedOut => Ok(Some(Vec::new())),
            events::Wait::Closed => Ok(None),
        }
    }

    /// Wake pending waits; the socket closes once none holds it.
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// Subscribe to groups named `link`, `ipv4-address`, `ipv6-address`,
/// `ipv4-route`, `ipv6-route`.
#[napi]
pub fn netlink_subscribe(groups: Vec<String>) -> napi::Result<NetlinkSubscription> {
    let mut nums = Vec::new();
    for g in &groups {
        nums.push(
            events::group_by_name(g)
                .ok_or_else(|| SysErr::new("NETLINK_ADD_MEMBERSHIP", libc::EINVAL, g.clone()))?,
        );
    }
    Ok(NetlinkSubscription {
        inner: Arc::new(events::Subscription::open(&nums)?),
    })
}

/// A received UDP datagram.
#[napi(object)]
pub struct DhcpDatagram {
    pub data: Uint8Array,
    pub from: String,
    pub port: u32,
}

/// The DHCPv4 client socket (see `netlink/dhcp_socket.rs`).
#[napi]
pub struct DhcpSocket {
    inner: Arc<dhcp_socket::DhcpSocket>,
}

#[napi]
impl DhcpSocket {
    /// Send `data` to `to:port`.
    #[napi]
    pub async fn send(&self, data: Uint8Array, to: String, port: u32) -> napi::Result<()> {
        let inner = self.inner.clone();
        let bytes = data.to_vec();
        let ip: IpAddr = to
            .parse()
            .map_err(|_| SysErr::new("sendto", libc::EINVAL, format!("bad IP {to:?}")))?;
        blocking(move || inner.send_to(&bytes, ip, port as u16)).await
    }

    /// Wait up to `timeout_ms` for a datagram; null on timeout or once closed.
    #[napi]
    pub async fn recv(&self, timeout_ms: u32) -> napi::Result<Option<DhcpDatagram>> {
        let inner = self.inner.clone();
        let t = timeout_ms.min(i32::MAX as u32) as i32;
        match blocking(move || inner.recv(t)).await? {
            dhcp_socket::Recv::Datagram(d) => Ok(Some(DhcpDatagram {
                data: Uint8Array::new(d.data),
                from: d.from.to_string(),
                port: d.port as u32,
            })),
            _ => Ok(None),
        }
    }

    /// Wake pending receives and release the socket.
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// Open a UDP socket on `port` (68 for a client) bound to interface `ifname`.
#[napi]
pub fn dhcp_open(ifname: String, port: u32) -> napi::Result<DhcpSocket> {
    Ok(DhcpSocket {
        inner: Arc::new(dhcp_socket::DhcpSocket::open(&ifname, port as u16)?),
    })
}

/// Open an IPv6 UDP socket on `[::]:port` (546 for a DHCPv6 client) bound to `ifname`.
#[napi]
pub fn dhcp6_open(ifname: String, port: u32) -> napi::Result<DhcpSocket> {
    Ok(DhcpSocket {
        inner: Arc::new(dhcp_socket::DhcpSocket::open_v6(&ifname, port as u16)?),
    })
}
