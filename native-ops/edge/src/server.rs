//! Accepts TCP, completes the TLS handshake within the handshake timeout
//! (refusals are rustls alerts), then serves HTTP/2 or HTTP/1.1 on the
//! connection, forwarding every request (proxy.rs). Bounds connections per
//! client address, and closes a connection idle for the idle timeout.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::alert_delay::AlertDelay;
use crate::body::Activity;
use crate::identity::{identify, Identity};
use crate::metrics::Metrics;
use crate::options::Options;
use crate::proxy::{forward, Route, Upstream};

/// What every connection shares.
pub struct Shared {
    pub options: Options,
    /// The TLS setup new connections get, and whether it is maintenance
    /// mode's; replaced by [`Shared::reload`] (SIGHUP), never for a
    /// connection already accepted.
    tls: std::sync::RwLock<(TlsAcceptor, bool)>,
    pub metrics: Arc<Metrics>,
    per_client: Mutex<HashMap<IpAddr, usize>>,
}

impl Shared {
    pub fn new(
        options: Options,
        acceptor: TlsAcceptor,
        maintenance: bool,
        metrics: Arc<Metrics>,
    ) -> Shared {
        Shared {
            options,
            tls: std::sync::RwLock::new((acceptor, maintenance)),
            metrics,
            per_client: Mutex::new(HashMap::new()),
        }
    }

    /// The TLS setup for a new connection.
    pub fn tls(&self) -> (TlsAcceptor, bool) {
        self.tls.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// New connections use `acceptor` (a re-issued certificate, another CA, or
    /// maintenance mode entered or left); open ones keep theirs.
    pub fn reload(&self, acceptor: TlsAcceptor, maintenance: bool) {
        *self.tls.write().unwrap_or_else(|p| p.into_inner()) = (acceptor, maintenance);
    }
}

/// A slot of the per-client bound, released on drop.
struct ClientSlot(Arc<Shared>, IpAddr);

impl ClientSlot {
    fn take(shared: &Arc<Shared>, ip: IpAddr) -> Option<ClientSlot> {
        let mut m = shared.per_client.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_default();
        if *n >= shared.options.max_connections_per_client {
            return None;
        }
        *n += 1;
        Some(ClientSlot(shared.clone(), ip))
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut m = self.0.per_client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// How long a connection may take to finish its requests after GOAWAY when
/// the edge stops (machined's supervisor sends SIGKILL 5 s after SIGTERM).
pub const DRAIN: Duration = Duration::from_millis(3500);

/// Nothing in flight this long counts as quiet enough to close a connection.
const QUIET: Duration = Duration::from_millis(200);

/// Accepts until `stop` turns true; each connection then closes gracefully.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>, stop: watch::Receiver<bool>) {
    let mut stopping = stop.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let Some(slot) = ClientSlot::take(&shared, peer.ip()) else {
                        shared.metrics.refused("too_many_connections");
                        continue;
                    };
                    let shared = shared.clone();
                    let stop = stop.clone();
                    tokio::spawn(async move {
                        connection(tcp, shared, stop).await;
                        drop(slot);
                    });
                }
                // Out of descriptors and the like: pause rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            _ = stopping.changed() => return,
        }
    }
}

async fn connection(tcp: TcpStream, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let _ = tcp.set_nodelay(true);
    let o = &shared.options;
    let (acceptor, maintenance) = shared.tls();
    let accept = acceptor.accept(AlertDelay::new(tcp)).into_fallible();
    let mut tls = match tokio::time::timeout(o.handshake_timeout, accept).await {
        Ok(Ok(tls)) => tls,
        Ok(Err((e, io))) => {
            handshake_failed(&shared, &e);
            return linger(io.send_held().await).await;
        }
        Err(_) => return shared.metrics.refused("handshake_timeout"),
    };
    tls.get_mut().0.release();
    let identity = if maintenance {
        Identity::maintenance()
    } else {
        let der = tls.get_ref().1.peer_certificates().and_then(|c| c.first());
        match der.map(|d| identify(d)) {
            Some(Ok(id)) => id,
            // The verifier refused these already; never serve without an identity.
            _ => return,
        }
    };
    shared.metrics.accepted();
    let activity = Activity::new();
    let route = Arc::new(Route {
        upstream: Arc::new(Upstream::new(PathBuf::from(&o.socket), o.max_header_bytes)),
        identity,
        activity: activity.clone(),
        metrics: shared.metrics.clone(),
    });
    let service = service_fn(move |req| {
        let route = route.clone();
        async move { Ok::<_, Infallible>(forward(&route, req).await) }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(o.handshake_timeout)
        .max_buf_size(o.max_header_bytes.max(8192) as usize);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(o.max_concurrent_streams)
        .max_header_list_size(o.max_header_bytes)
        .keep_alive_interval(Some(Duration::from_secs(60)))
        .keep_alive_timeout(Duration::from_secs(20));
    let conn = builder.serve_connection(TokioIo::new(tls), service);
    tokio::pin!(conn);
    let idle = idle_timeout(activity.clone(), o.idle_timeout);
    tokio::pin!(idle);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = &mut idle => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
        _ = stop.changed() => {
            // Let what is in flight finish, and the client read it, before GOAWAY and the
            // close: a close with the client's bytes unread is a reset, which makes the
            // client's kernel drop an answer it has not read yet.
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = tokio::time::timeout(DRAIN, idle_timeout(activity, QUIET)) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(QUIET, conn).await;
                }
            }
        }
    }
    shared.metrics.closed();
}

/// Resolves once the connection has had nothing in flight for `limit`.
async fn idle_timeout(activity: Arc<Activity>, limit: Duration) {
    let tick = (limit / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    loop {
        tokio::time::sleep(tick).await;
        if activity.idle_for() >= limit {
            return;
        }
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
fn handshake_failed(shared: &Shared, e: &io::Error) {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(_)) => {} // counted by the verifier, by reason
        Some(rustls::Error::NoCertificatesPresented) => shared.metrics.refused("no_certificate"),
        _ => shared.metrics.refused("handshake"),
    }
}
