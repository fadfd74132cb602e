//! The client certificate verifier: webpki checks the chain to the node CA,
//! the validity period and the clientAuth usage; identity.rs then refuses what
//! webpki lets through (no EKU at all, a KeyUsage without digitalSignature, no
//! role) or reports vaguely (a CA or v1 certificate). Every refusal is a
//! rustls error, so the client gets a TLS alert naming it: `unknown_ca`,
//! `certificate_expired`, `bad_certificate`, `unsupported_certificate`,
//! `access_denied`; no certificate at all gets `certificate_required`.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};

use crate::identity::{identify, Refusal};
use crate::metrics::Metrics;

/// Wraps webpki's verifier with the node's own rules.
#[derive(Debug)]
pub struct NodeClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    metrics: Arc<Metrics>,
}

impl NodeClientVerifier {
    /// A verifier trusting each certificate of `cas` (ca.crt holds the node CA
    /// and, during a CA rotation, the other CAs `machine.ca.accepted` lists).
    pub fn new(cas: Vec<CertificateDer<'static>>, metrics: Arc<Metrics>) -> Result<Self, String> {
        if cas.is_empty() {
            return Err("ca.crt holds no certificate".into());
        }
        let mut roots = rustls::RootCertStore::empty();
        for (i, ca) in cas.into_iter().enumerate() {
            roots.add(ca).map_err(|e| {
                format!("cannot use certificate {i} of ca.crt as a trust anchor: {e}")
            })?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let inner = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| format!("cannot build the client verifier: {e}"))?;
        Ok(NodeClientVerifier { inner, metrics })
    }
}

/// The rustls error (hence the alert) for a refusal of ours.
pub fn refusal_error(r: Refusal) -> Error {
    Error::InvalidCertificate(match r {
        Refusal::Malformed | Refusal::IsCa => CertificateError::BadEncoding,
        Refusal::Version1 | Refusal::NoClientAuth | Refusal::NoDigitalSignature => {
            CertificateError::InvalidPurpose
        }
        Refusal::NoRole => CertificateError::ApplicationVerificationFailure,
    })
}

/// A label for a rustls refusal, for the metrics.
fn reason_of(e: &Error) -> &'static str {
    match e {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => "unknown_ca",
        Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "expired",
        Error::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => "not_yet_valid",
        Error::InvalidCertificate(
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. },
        ) => "not_client_auth",
        _ => "bad_certificate",
    }
}

impl ClientCertVerifier for NodeClientVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let result = verify(&*self.inner, end_entity, intermediates, now);
        if let Err(e) = &result {
            let reason = match identify(end_entity) {
                Err(r)
                    if !matches!(
                        e,
                        Error::InvalidCertificate(CertificateError::UnknownIssuer)
                    ) =>
                {
                    r.reason()
                }
                _ => reason_of(e),
            };
            self.metrics.refused(reason);
        }
        result
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// webpki first (so a foreign CA is `unknown_ca` whatever else is wrong), then ours.
pub fn verify(
    inner: &dyn ClientCertVerifier,
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    now: UnixTime,
) -> Result<ClientCertVerified, Error> {
    match inner.verify_client_cert(end_entity, intermediates, now) {
        Ok(ok) => identify(end_entity).map(|_| ok).map_err(refusal_error),
        // webpki's CaUsedAsEndEntity and UnsupportedCertVersion arrive as Other
        // (alert certificate_unknown): name them as ours do.
        Err(Error::InvalidCertificate(CertificateError::Other(o))) => match identify(end_entity) {
            Err(r) => Err(refusal_error(r)),
            Ok(_) => Err(Error::InvalidCertificate(CertificateError::Other(o))),
        },
        // A certificate naming the node CA as issuer but not signed by it is
        // from another CA (same subject): say unknown_ca, not decrypt_error.
        #[allow(deprecated)]
        Err(Error::InvalidCertificate(CertificateError::BadSignature)) => {
            Err(Error::InvalidCertificate(CertificateError::UnknownIssuer))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Identity;
    use rustls::pki_types::pem::PemObject;
    use rustls::AlertDescription;

    fn der(pem: &str) -> CertificateDer<'static> {
        CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
    }

    fn verifier() -> NodeClientVerifier {
        NodeClientVerifier::new(
            vec![der(include_str!("../testdata/ca.crt"))],
            Arc::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_bundle_trusts_each_of_its_cas() {
        let both = NodeClientVerifier::new(
            vec![
                der(include_str!("../testdata/ca.crt")),
                der(include_str!("../testdata/other-ca.crt")),
            ],
            Arc::default(),
        )
        .unwrap();
        for pem in [
            include_str!("../testdata/admin.crt"),
            include_str!("../testdata/foreign.crt"),
        ] {
            assert!(both.verify_client_cert(&der(pem), &[], at(0)).is_ok());
        }
        assert!(NodeClientVerifier::new(vec![], Arc::default()).is_err());
    }

    /// Now, or `years` from now.
    fn at(years: u64) -> UnixTime {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        UnixTime::since_unix_epoch(now + std::time::Duration::from_secs(years * 366 * 86400))
    }

    /// The alert a client presenting `pem` gets, or None when accepted.
    fn alert(pem: &str, years: u64) -> Option<AlertDescription> {
        let v = verifier();
        match v.verify_client_cert(&der(pem), &[], at(years)) {
            Ok(_) => None,
            Err(Error::InvalidCertificate(e)) => Some(e.into()),
            Err(e) => panic!("not a certificate error: {e:?}"),
        }
    }

    #[test]
    fn a_good_certificate_passes_with_its_role() {
        assert_eq!(alert(include_str!("../testdata/admin.crt"), 0), None);
        let id = identify(&der(include_str!("../testdata/admin.crt"))).unwrap();
        assert_eq!(id.role, "os:admin");
        assert_eq!(id.name, "admin");
        assert!(!id.serial.is_empty() && id.serial.chars().all(|c| c.is_ascii_hexdigit()));
        // Several O= values: the most privileged role wins.
        let bob: Identity = identify(&der(include_str!("../testdata/reader.crt"))).unwrap();
        assert_eq!((bob.role, bob.name.as_str()), ("os:operator", "bob smith"));
    }

    #[test]
    fn each_refusal_has_its_alert() {
        use AlertDescription::*;
        let cases: [(&str, &str, u64, AlertDescription); 8] = [
            (
                "foreign CA",
                include_str!("../testdata/foreign.crt"),
                0,
                UnknownCA,
            ),
            (
                "expired",
                include_str!("../testdata/admin.crt"),
                101,
                CertificateExpired,
            ),
            (
                "serverAuth only",
                include_str!("../testdata/server-only.crt"),
                0,
                UnsupportedCertificate,
            ),
            (
                "no EKU",
                include_str!("../testdata/no-eku.crt"),
                0,
                UnsupportedCertificate,
            ),
            (
                "no digitalSignature",
                include_str!("../testdata/no-ds.crt"),
                0,
                UnsupportedCertificate,
            ),
            (
                "v1",
                include_str!("../testdata/v1.crt"),
                0,
                UnsupportedCertificate,
            ),
            (
                "CA certificate",
                include_str!("../testdata/ca-as-client.crt"),
                0,
                BadCertificate,
            ),
            (
                "no role",
                include_str!("../testdata/no-role.crt"),
                0,
                AccessDenied,
            ),
        ];
        for (what, pem, years, want) in cases {
            assert_eq!(alert(pem, years), Some(want), "{what}");
        }
        // The node CA's own certificate, presented as a client's.
        assert_eq!(
            alert(include_str!("../testdata/ca.crt"), 0),
            Some(BadCertificate)
        );
    }

    #[test]
    fn refusals_are_counted_by_reason() {
        let metrics = Arc::new(Metrics::default());
        let v = NodeClientVerifier::new(
            vec![der(include_str!("../testdata/ca.crt"))],
            metrics.clone(),
        )
        .unwrap();
        let _ = v.verify_client_cert(&der(include_str!("../testdata/foreign.crt")), &[], at(0));
        let _ = v.verify_client_cert(&der(include_str!("../testdata/no-eku.crt")), &[], at(0));
        let text = metrics.render();
        assert!(text.contains("{reason=\"unknown_ca\"} 1"), "{text}");
        assert!(text.contains("{reason=\"not_client_auth\"} 1"), "{text}");
    }

    #[test]
    fn client_auth_is_mandatory() {
        let v = verifier();
        assert!(v.offer_client_auth() && v.client_auth_mandatory());
    }
}
