//! Who a verified client is, read from its certificate, and how that identity
//! crosses the Unix socket to machined: in `x-machined-*` headers the edge
//! always writes itself. Mirrors pki/verify_client_certificate.ts and
//! api/auth/identity.ts: role from the subject's O= (most privileged wins),
//! name from CN, serial as lowercase hex of the DER integer.

use http::{HeaderMap, HeaderName, HeaderValue};
use x509_parser::prelude::{FromDer, X509Certificate, X509Version};

/// Roles a client certificate can carry, most privileged first (pki/role.ts).
pub const ROLES: [&str; 3] = ["os:admin", "os:operator", "os:reader"];

/// Every header machined trusts starts with this; a client's are stripped.
pub const IDENTITY_PREFIX: &str = "x-machined-";
pub const ROLE_HEADER: &str = "x-machined-role";
pub const NAME_HEADER: &str = "x-machined-identity";
pub const SERIAL_HEADER: &str = "x-machined-serial";
pub const MAINTENANCE_HEADER: &str = "x-machined-maintenance";

/// A verified caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub role: &'static str,
    pub name: String,
    pub serial: String,
    /// A caller without a certificate on a node in maintenance mode.
    pub maintenance: bool,
}

impl Identity {
    /// The caller the edge forwards in maintenance mode (api/auth/maintenance.ts's MAINTENANCE_CALLER).
    pub fn maintenance() -> Identity {
        Identity {
            role: "os:reader",
            name: "maintenance".into(),
            serial: String::new(),
            maintenance: true,
        }
    }
}

/// Why a certificate the CA signed is still refused; each maps to a TLS alert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    Malformed,
    Version1,
    IsCa,
    NoClientAuth,
    NoDigitalSignature,
    NoRole,
}

impl Refusal {
    /// A short reason for the log and the metrics label.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed",
            Refusal::Version1 => "v1_certificate",
            Refusal::IsCa => "is_ca",
            Refusal::NoClientAuth => "not_client_auth",
            Refusal::NoDigitalSignature => "no_digital_signature",
            Refusal::NoRole => "no_role",
        }
    }
}

/// The checks webpki does not make on an end-entity client certificate, and
/// the identity it carries. Signature, chain and validity are webpki's.
pub fn identify(der: &[u8]) -> Result<Identity, Refusal> {
    let (_, cert) = X509Certificate::from_der(der).map_err(|_| Refusal::Malformed)?;
    if cert.version() != X509Version::V3 {
        return Err(Refusal::Version1);
    }
    if cert.is_ca() {
        return Err(Refusal::IsCa);
    }
    match cert.extended_key_usage() {
        Ok(Some(eku)) if eku.value.client_auth => {}
        Ok(_) => return Err(Refusal::NoClientAuth),
        Err(_) => return Err(Refusal::Malformed),
    }
    match cert.key_usage() {
        Ok(Some(ku)) if !ku.value.digital_signature() => return Err(Refusal::NoDigitalSignature),
        Ok(_) => {}
        Err(_) => return Err(Refusal::Malformed),
    }
    let orgs: Vec<&str> = cert
        .subject()
        .iter_organization()
        .filter_map(|a| a.as_str().ok())
        .collect();
    let role = ROLES
        .iter()
        .find(|r| orgs.contains(r))
        .ok_or(Refusal::NoRole)?;
    let name = cert
        .subject()
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())
        .unwrap_or("")
        .to_string();
    Ok(Identity {
        role,
        name,
        serial: hex(cert.raw_serial()),
        maintenance: false,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// JavaScript's encodeURIComponent, so machined's decodeURIComponent reads the CN back.
pub fn encode_uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Removes every `x-machined-*` header a client sent and writes the verified identity.
pub fn overwrite_identity(headers: &mut HeaderMap, id: &Identity) {
    let forged: Vec<HeaderName> = headers
        .keys()
        .filter(|k| k.as_str().starts_with(IDENTITY_PREFIX))
        .cloned()
        .collect();
    for k in forged {
        headers.remove(&k);
    }
    let set = |h: &mut HeaderMap, k: &'static str, v: &str| {
        // Every value is ASCII by construction (role, hex, percent-encoded CN).
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(HeaderName::from_static(k), v);
        }
    };
    set(headers, ROLE_HEADER, id.role);
    set(headers, NAME_HEADER, &encode_uri_component(&id.name));
    set(headers, SERIAL_HEADER, &id.serial);
    if id.maintenance {
        set(headers, MAINTENANCE_HEADER, "1");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_javascript() {
        assert_eq!(encode_uri_component("admin"), "admin");
        assert_eq!(encode_uri_component("a b/ü"), "a%20b%2F%C3%BC");
        assert_eq!(encode_uri_component("x-_.!~*'()"), "x-_.!~*'()");
    }

    #[test]
    fn client_headers_never_survive() {
        let mut h = HeaderMap::new();
        h.insert("x-machined-role", HeaderValue::from_static("os:admin"));
        h.append("x-machined-role", HeaderValue::from_static("os:admin"));
        h.insert("x-machined-maintenance", HeaderValue::from_static("1"));
        h.insert("x-machined-anything", HeaderValue::from_static("x"));
        h.insert("content-type", HeaderValue::from_static("application/grpc"));
        let id = Identity {
            role: "os:reader",
            name: "bob smith".into(),
            serial: "0a7e".into(),
            maintenance: false,
        };
        overwrite_identity(&mut h, &id);
        assert_eq!(h.get_all("x-machined-role").iter().count(), 1);
        assert_eq!(h["x-machined-role"], "os:reader");
        assert_eq!(h["x-machined-identity"], "bob%20smith");
        assert_eq!(h["x-machined-serial"], "0a7e");
        assert!(h.get("x-machined-maintenance").is_none());
        assert!(h.get("x-machined-anything").is_none());
        assert_eq!(h["content-type"], "application/grpc");
    }

    #[test]
    fn maintenance_caller_is_marked() {
        let mut h = HeaderMap::new();
        overwrite_identity(&mut h, &Identity::maintenance());
        assert_eq!(h["x-machined-maintenance"], "1");
        assert_eq!(h["x-machined-role"], "os:reader");
    }
}
