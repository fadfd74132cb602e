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
    /// A verifier trusting `ca` alone.
    pub fn new(ca: CertificateDer<'static>, metrics: Arc<Metrics>) -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(ca)
            .map_err(|e| format!("cannot use ca.crt as a trust anchor: {e}"))?;
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
                Err(r) if !matches!(e, Error::InvalidCertificate(CertificateError::UnknownIssuer)) => {
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
        Err(e) => Err(e),
    }
}
