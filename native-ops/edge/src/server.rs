//! Accepts TCP, completes the TLS handshake (tls.rs) within the handshake
//! budget (an evicted handshake is closed), then serves the protocol ALPN
//! chose (HTTP/2 or HTTP/1.1; both without ALPN), forwarding every request
//! (proxy.rs) within the connection and stream budgets (admission.rs).
//! Closes a connection idle for the idle timeout.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http::Request;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio_rustls::TlsAcceptor;

use crate::admission::{self, Budgeted, Budgets, CLIENT_CONNECTION_WINDOW, CLIENT_STREAM_WINDOW};
use crate::body::Activity;
use crate::budget::{Slot, Source};
use crate::handshakes::HandshakeSlot;
use crate::identity::Identity;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::proxy::{forward, Route, Upstream};
use crate::upstream_pool::UpstreamPool;

/// What every connection shares.
pub struct Shared {
    pub options: Options,
    /// The TLS setup new connections get, and whether it is maintenance
    /// mode's; replaced by [`Shared::reload`] (SIGHUP), never for a
    /// connection already accepted.
    tls: std::sync::RwLock<(TlsAcceptor, bool)>,
    pub metrics: Arc<Metrics>,
    pub budgets: Arc<Budgets>,
    /// Upstream connections handed from one client connection to the next.
    pub pool: Arc<UpstreamPool>,
}

impl Shared {
    pub fn new(
        options: Options,
        acceptor: TlsAcceptor,
        maintenance: bool,
        metrics: Arc<Metrics>,
    ) -> Shared {
        let budgets = Arc::new(Budgets::new(&options));
        budgets.gauges(&metrics);
        Shared {
            options,
            tls: std::sync::RwLock::new((acceptor, maintenance)),
            metrics,
            budgets,
            pool: Arc::new(UpstreamPool::default()),
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
                    let source = Source::of(peer.ip());
                    let (slot, evicted) = shared.budgets.handshakes.admit(source);
                    if let Some(why) = evicted {
                        shared.metrics.over_budget(why.reason());
                    }
                    tokio::spawn(connection(tcp, source, slot, shared.clone(), stop.clone()));
                }
                // Out of descriptors and the like: pause rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            _ = stopping.changed() => return,
        }
    }
}

async fn connection(
    tcp: TcpStream,
    source: Source,
    mut slot: HandshakeSlot,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
) {
    let done = tokio::select! {
        done = handshake(tcp, shared.tls(), shared.options.handshake_timeout, &shared.metrics) => done,
        _ = slot.evicted() => None, // counted when the newcomer was admitted
    };
    let Some((tls, identity)) = done else { return };
    match shared.budgets.connections.take(&source) {
        Ok(admitted) => {
            drop(slot);
            serve_admitted(tls, identity, source, admitted, shared, stop).await
        }
        Err(over) => {
            // Still in the handshake budget (so bounded and evictable) while it is told why.
            let (reason, message) = admission::connection_refusal(over, source);
            shared.metrics.over_budget(reason);
            tokio::select! {
                _ = refuse(tls, message, &shared) => {}
                _ = slot.evicted() => {}
            }
        }
    }
}

use crate::tls::{handshake, Tls};

/// The HTTP server for a connection: only the protocol ALPN chose (a client
/// that says h2 and then speaks HTTP/1.1 gets a connection error), either
/// one without ALPN.
fn http_builder(o: &Options, tls: &Tls) -> auto::Builder<TokioExecutor> {
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
        .initial_stream_window_size(CLIENT_STREAM_WINDOW)
        .initial_connection_window_size(CLIENT_CONNECTION_WINDOW)
        .keep_alive_interval(Some(Duration::from_secs(60)))
        .keep_alive_timeout(Duration::from_secs(20));
    match tls.get_ref().1.alpn_protocol() {
        Some(b"h2") => builder.http2_only(),
        Some(b"http/1.1") => builder.http1_only(),
        _ => builder,
    }
}

/// Over the connection budget: every request gets ResourceExhausted naming
/// the budget; the connection closes after the first answer (GOAWAY) or
/// after REFUSED_CONNECTION.
async fn refuse(tls: Tls, message: String, shared: &Shared) {
    let answered = Arc::new(Notify::new());
    let told = answered.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        let told = told.clone();
        let message = message.clone();
        async move {
            let (parts, body) = req.into_parts();
            admission::drain(body).await;
            told.notify_one();
            let res = admission::exhausted(&parts.headers, parts.version, &message);
            Ok::<_, Infallible>(res)
        }
    });
    let builder = http_builder(&shared.options, &tls);
    let conn = builder.serve_connection(TokioIo::new(tls), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = tokio::time::timeout(admission::REFUSED_CONNECTION, answered.notified()) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(QUIET, conn).await;
}

/// A connection within the connection budget: every request forwarded within the stream budget.
async fn serve_admitted(
    tls: Tls,
    identity: Identity,
    source: Source,
    admitted: Slot<Source>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let o = &shared.options;
    shared.metrics.accepted();
    let activity = Activity::new();
    let key = admission::client_key(&identity, source);
    let upstream = Arc::new(Upstream::new(
        PathBuf::from(&o.socket),
        o.max_header_bytes,
        shared.pool.clone(),
        shared.metrics.clone(),
    ));
    let route = Arc::new(Route {
        upstream: upstream.clone(),
        identity,
        activity: activity.clone(),
        metrics: shared.metrics.clone(),
    });
    let budgets = shared.budgets.clone();
    let metrics = shared.metrics.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        let route = route.clone();
        let taken = budgets.streams.take(&key);
        let metrics = metrics.clone();
        async move {
            let res = match taken {
                Ok(slot) => forward(&route, req)
                    .await
                    .map(|b| Budgeted::new(b, Some(slot))),
                Err(over) => {
                    let (reason, message) = admission::stream_refusal(over);
                    metrics.over_budget(reason);
                    let (parts, body) = req.into_parts();
                    admission::drain(body).await;
                    admission::exhausted(&parts.headers, parts.version, &message)
                        .map(|b| Budgeted::new(b, None))
                }
            };
            Ok::<_, Infallible>(res)
        }
    });
    let builder = http_builder(o, &tls);
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
    upstream.release();
    drop(admitted);
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
