//! The edge's TLS: TLS 1.3 only, ALPN h2 then http/1.1, the server pair from
//! the PKI directory machined writes (api/edge/load_apid_pki.ts's layout), and
//! either a mandatory node-CA client certificate or, when machined left the
//! `maintenance` marker instead of ca.crt, no client certificate at all; and
//! the handshake itself, within the handshake timeout (refusals are rustls alerts).

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::NoClientAuth;
use rustls::ServerConfig;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::alert_delay::AlertDelay;
use crate::identity::{identify, Identity};
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
            // Every certificate in the file is a trust anchor (the node CA first,
            // then those `machine.ca.accepted` adds during a CA rotation).
            let cas: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&ca_path)
                .map_err(|e| format!("cannot read {}: {e}", ca_path.display()))?
                .collect::<Result<_, _>>()
                .map_err(|e| format!("cannot parse {}: {e}", ca_path.display()))?;
            let verifier = NodeClientVerifier::new(cas, metrics)?;
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

/// A client connection past its TLS handshake.
pub type Tls = TlsStream<AlertDelay>;

/// The TLS handshake within the handshake timeout, and the caller's identity; None when refused.
pub async fn handshake(
    tcp: TcpStream,
    (acceptor, maintenance): (TlsAcceptor, bool),
    timeout: Duration,
    metrics: &Metrics,
) -> Option<(Tls, Identity)> {
    let _ = tcp.set_nodelay(true);
    let accept = acceptor.accept(AlertDelay::new(tcp)).into_fallible();
    let mut tls = match tokio::time::timeout(timeout, accept).await {
        Ok(Ok(tls)) => tls,
        Ok(Err((e, io))) => {
            handshake_failed(metrics, &e);
            linger(io.send_held().await).await;
            return None;
        }
        Err(_) => {
            metrics.refused("handshake_timeout");
            return None;
        }
    };
    tls.get_mut().0.release();
    if maintenance {
        return Some((tls, Identity::maintenance()));
    }
    let der = tls.get_ref().1.peer_certificates().and_then(|c| c.first());
    match der.map(|d| identify(d)) {
        Some(Ok(id)) => Some((tls, id)),
        // The verifier refused these already; never serve without an identity.
        _ => None,
    }
}

/// After the alert: end our side, then read what the client had already sent
/// (with TLS 1.3 its first requests follow its certificate at once) for a
/// moment before closing. Closing with unread data makes the kernel send a
/// reset, which can overtake the alert; this way the client reads the alert.
async fn linger(mut tcp: TcpStream) {
    let _ = tcp.shutdown().await;
    let mut buf = [0u8; 4096];
    let drain = async {
        while let Ok(n) = tcp.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(500), drain).await;
}

/// Counts a refused handshake the verifier did not already count.
fn handshake_failed(metrics: &Metrics, e: &io::Error) {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(_)) => {} // counted by the verifier, by reason
        Some(rustls::Error::NoCertificatesPresented) => metrics.refused("no_certificate"),
        _ => metrics.refused("handshake"),
    }
}
