//! The edge's TLS: TLS 1.3 only, ALPN h2 then http/1.1, the server pair from
//! the PKI directory machined writes (api/apid/load_apid_pki.ts's layout), and
//! either a mandatory node-CA client certificate or, when machined left the
//! `maintenance` marker instead of ca.crt, no client certificate at all.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::NoClientAuth;
use rustls::ServerConfig;

use crate::metrics::Metrics;
use crate::verifier::NodeClientVerifier;

/// What the PKI directory held.
pub struct Pki {
    pub config: Arc<ServerConfig>,
    pub maintenance: bool,
}

/// Reads `dir` and builds the server configuration.
pub fn load(dir: &str, metrics: Arc<Metrics>) -> Result<Pki, String> {
    let dir = Path::new(dir);
    let file = |name: &str| dir.join(name);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(file("server.crt"))
        .map_err(|e| format!("cannot read {}: {e}", file("server.crt").display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot parse {}: {e}", file("server.crt").display()))?;
    let key = PrivateKeyDer::from_pem_file(file("server.key"))
        .map_err(|e| format!("cannot read {}: {e}", file("server.key").display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS 1.3: {e}"))?;
    let ca_path = file("ca.crt");
    let (builder, maintenance) = match std::fs::metadata(&ca_path) {
        Ok(_) => {
            let ca = CertificateDer::from_pem_file(&ca_path)
                .map_err(|e| format!("cannot read {}: {e}", ca_path.display()))?;
            let verifier = NodeClientVerifier::new(ca, metrics)?;
            (builder.with_client_cert_verifier(Arc::new(verifier)), false)
        }
        // A lost ca.crt alone is an error, never an open API: only the marker opens it.
        Err(_) if file("maintenance").exists() => (
            builder.with_client_cert_verifier(Arc::new(NoClientAuth)),
            true,
        ),
        Err(e) => return Err(format!("cannot read {}: {e}", ca_path.display())),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("server.crt and server.key do not make a pair: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // No session tickets: each connection authenticates its client certificate afresh.
    config.send_tls13_tickets = 0;
    Ok(Pki {
        config: Arc::new(config),
        maintenance,
    })
}
