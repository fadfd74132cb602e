//! Thin `#[napi]` wrappers over `netlink/link_kind.rs`: create, delete and
//! enslave virtual links (VLAN, bond, bridge). Each runs on a blocking worker.

use crate::error::{SysErr, SysResult};
use crate::napi_netlink::blocking;
use crate::netlink::{link_kind, socket::NlSocket};
use napi_derive::napi;

/// A virtual link to create; fields that do not apply to `kind` are absent.
#[napi(object)]
pub struct NlLinkCreate {
    pub name: String,
    /// `vlan`, `bond`, `bridge` or `wireguard`.
    pub kind: String,
    /// A VLAN's parent link name.
    pub parent: Option<String>,
    pub vlan_id: Option<u32>,
    /// `active-backup`, `802.3ad`, ...
    pub bond_mode: Option<String>,
    pub miimon: Option<u32>,
    /// `slow` or `fast`.
    pub lacp_rate: Option<String>,
    /// `layer2`, `layer3+4`, `layer2+3`, `encap2+3`, `encap3+4`.
    pub xmit_hash_policy: Option<String>,
    pub stp: Option<bool>,
    /// Set as IFLA_IFALIAS right after creation.
    pub alias: Option<String>,
}

impl NlLinkCreate {
    fn to_create(&self) -> SysResult<link_kind::LinkCreate> {
        let vlan_id = self
            .vlan_id
            .map(|v| {
                u16::try_from(v)
                    .map_err(|_| SysErr::new("RTM_NEWLINK", libc::EINVAL, format!("VLAN id {v}")))
            })
            .transpose()?;
        Ok(link_kind::LinkCreate {
            name: self.name.clone(),
            kind: self.kind.clone(),
            parent: self.parent.clone(),
            vlan_id,
            bond_mode: self.bond_mode.clone(),
            miimon: self.miimon,
            lacp_rate: self.lacp_rate.clone(),
            xmit_hash_policy: self.xmit_hash_policy.clone(),
            stp: self.stp,
            alias: self.alias.clone(),
        })
    }
}

/// Create a link (EEXIST when the name is taken, ENODEV for a missing VLAN
/// parent, EOPNOTSUPP when the kernel has no driver for the kind).
#[napi]
pub async fn netlink_create_link(spec: NlLinkCreate) -> napi::Result<()> {
    let c = spec.to_create()?;
    blocking(move || link_kind::create(&NlSocket::open(&[])?, &c)).await
}

/// Delete a link by name (ENODEV when missing).
#[napi]
pub async fn netlink_delete_link(name: String) -> napi::Result<()> {
    blocking(move || link_kind::delete(&NlSocket::open(&[])?, &name)).await
}

/// Enslave `name` to `master`, or release it when `master` is absent.
#[napi]
pub async fn netlink_set_link_master(name: String, master: Option<String>) -> napi::Result<()> {
    blocking(move || link_kind::set_master(&NlSocket::open(&[])?, &name, master.as_deref())).await
}
