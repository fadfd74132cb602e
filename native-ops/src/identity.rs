//! Node identity: sethostname(2), setdomainname(2), and uname(2) to read them back.

use crate::error::{SysErr, SysResult};
use crate::util::check;

/// The kernel's view of this node (uname(2)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uname {
    pub sysname: String,
    pub nodename: String,
    pub release: String,
    pub version: String,
    pub machine: String,
    pub domainname: String,
}

fn field(raw: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// uname(2).
pub fn uname() -> SysResult<Uname> {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: writable utsname.
    check("uname", "", unsafe { libc::uname(&mut u) })?;
    Ok(Uname {
        sysname: field(&u.sysname),
        nodename: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
        domainname: field(&u.domainname),
    })
}

const MAX_NAME: usize = 64; // __NEW_UTS_LEN

fn validate(op: &str, name: &str) -> SysResult<()> {
    if name.len() > MAX_NAME || name.contains('\0') {
        return Err(SysErr::new(op, libc::EINVAL, name.to_string()));
    }
    Ok(())
}

/// sethostname(2). Affects the caller's UTS namespace.
pub fn set_hostname(name: &str) -> SysResult<()> {
    validate("sethostname", name)?;
    // SAFETY: pointer and length describe `name`.
    let ret = unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    check("sethostname", name, ret).map(|_| ())
}

/// setdomainname(2) (the NIS domain name the kernel reports).
pub fn set_domainname(name: &str) -> SysResult<()> {
    validate("setdomainname", name)?;
    // SAFETY: pointer and length describe `name`.
    let ret = unsafe { libc::setdomainname(name.as_ptr().cast(), name.len()) };
    check("setdomainname", name, ret).map(|_| ())
}

pub mod js {
    use napi_derive::napi;

    /// uname(2) fields.
    #[napi(object)]
    pub struct UnameInfo {
        pub sysname: String,
        pub nodename: String,
        pub release: String,
        pub version: String,
        pub machine: String,
        pub domainname: String,
    }

    /// uname(2); never blocks.
    #[napi]
    pub fn uname() -> napi::Result<UnameInfo> {
        let u = super::uname()?;
        Ok(UnameInfo {
            sysname: u.sysname,
            nodename: u.nodename,
            release: u.release,
            version: u.version,
            machine: u.machine,
            domainname: u.domainname,
        })
    }

    /// sethostname(2); never blocks.
    #[napi]
    pub fn set_hostname(name: String) -> napi::Result<()> {
        Ok(super::set_hostname(&name)?)
    }

    /// setdomainname(2); never blocks.
    #[napi]
    pub fn set_domainname(name: String) -> napi::Result<()> {
        Ok(super::set_domainname(&name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uname() {
        let u = uname().unwrap();
        assert_eq!(u.sysname, "Linux");
    }

    #[test]
    fn too_long_is_einval() {
        let e = set_hostname(&"x".repeat(65)).unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("sethostname", libc::EINVAL));
    }
}
