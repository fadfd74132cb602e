//! Admission after the handshake: the connection budget (overall and per
//! source) and the stream budget (requests in flight, overall and per client
//! certificate), the refusals they answer in the request's own protocol
//! (ResourceExhausted, naming the budget and its number), and the response
//! body that holds a stream's slot until the stream ends.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Response, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use crate::body::EdgeBody;
use crate::budget::{Budget, Over, Slot, Source};
use crate::handshakes::Handshakes;
use crate::identity::Identity;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::proxy::{json_string, reply, Protocol, RESOURCE_EXHAUSTED};

/// A connection refused by the connection budget is closed after its first
/// answer, or this long after its handshake when it asks nothing.
pub const REFUSED_CONNECTION: Duration = Duration::from_millis(1000);

/// HTTP/2 receive window per client stream (the protocol's default, instead
/// of hyper's 1 MiB): what the edge may hold of a request machined is not reading.
pub const CLIENT_STREAM_WINDOW: u32 = 64 * 1024;
/// HTTP/2 receive window per client connection, for all its streams together.
pub const CLIENT_CONNECTION_WINDOW: u32 = 64 * 1024;

/// How long a refusal waits for the rest of the refused request, and how
/// much of it it reads (and drops): answering a request the client is still
/// sending makes HTTP/2 reset the stream after the answer, which some clients
/// (curl) report instead of the answer.
pub const REFUSAL_DRAIN: Duration = Duration::from_millis(250);
pub const REFUSAL_DRAIN_BYTES: usize = CLIENT_STREAM_WINDOW as usize;

/// Reads and drops what is left of a refused request, within the bounds above.
pub async fn drain(mut body: Incoming) {
    let read = async {
        let mut n = 0;
        while let Some(Ok(frame)) = body.frame().await {
            n += frame.data_ref().map_or(0, |d| d.len());
            if n >= REFUSAL_DRAIN_BYTES {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(REFUSAL_DRAIN, read).await;
}

/// Every budget the connections share.
pub struct Budgets {
    pub handshakes: Arc<Handshakes>,
    pub connections: Arc<Budget<Source>>,
    pub streams: Arc<Budget<String>>,
}

impl Budgets {
    pub fn new(o: &Options) -> Budgets {
        Budgets {
            handshakes: Handshakes::new(o.max_handshakes, o.max_handshakes_per_source),
            connections: Budget::new(o.max_connections, o.max_connections_per_client),
            streams: Budget::new(o.max_streams, o.max_streams_per_client),
        }
    }

    /// Renders what each budget holds with the edge's metrics.
    pub fn gauges(self: &Arc<Self>, metrics: &Metrics) {
        let b = self.clone();
        metrics.set_gauges(Box::new(move || {
            vec![
                (
                    "machined_edge_handshakes_pending",
                    "TLS handshakes in progress",
                    b.handshakes.pending(),
                ),
                (
                    "machined_edge_connections_admitted",
                    "Connections within the connection budget",
                    b.connections.held(),
                ),
                (
                    "machined_edge_streams_open",
                    "Requests in flight within the stream budget",
                    b.streams.held(),
                ),
            ]
        }));
    }
}

/// Whose stream budget a request counts against: its certificate (by
/// serial, unique under the node CA), or its source in maintenance mode,
/// where callers show no certificate.
pub fn client_key(identity: &Identity, source: Source) -> String {
    if identity.maintenance || identity.serial.is_empty() {
        format!("source {source}")
    } else {
        format!("serial {}", identity.serial)
    }
}

/// The metrics reason and the message for a connection over budget.
pub fn connection_refusal(over: Over, source: Source) -> (&'static str, String) {
    match over {
        Over::PerKey { limit } => (
            "connection_source_budget",
            format!("connection budget: {limit} connections open from {source} (limit {limit})"),
        ),
        Over::Overall { limit } => (
            "connection_budget",
            format!("connection budget: {limit} connections open on this node (limit {limit})"),
        ),
    }
}

/// The metrics reason and the message for a request over budget.
pub fn stream_refusal(over: Over) -> (&'static str, String) {
    match over {
        Over::PerKey { limit } => (
            "stream_client_budget",
            format!(
                "stream budget: {limit} open streams for this client certificate (limit {limit})"
            ),
        ),
        Over::Overall { limit } => (
            "stream_budget",
            format!("stream budget: {limit} open streams on this node (limit {limit})"),
        ),
    }
}

/// ResourceExhausted for a request with `headers`, in its protocol: gRPC and
/// gRPC-Web trailers-only, Connect streaming an end-stream message, Connect
/// unary HTTP 429 with the JSON error. Nothing reaches machined.
pub fn exhausted(headers: &HeaderMap, version: Version, message: &str) -> Response<EdgeBody> {
    let ct = headers.get(CONTENT_TYPE);
    let streaming = ct
        .and_then(|v| v.to_str().ok())
        .map(|v| v.starts_with("application/connect+"));
    let mut res = match streaming {
        Some(true) => connect_end_stream(ct.cloned(), message),
        _ => reply(Protocol::of(ct), &RESOURCE_EXHAUSTED, message),
    };
    *res.version_mut() = version;
    res
}

/// A Connect stream that ends at once with the error (flags 0x02, JSON).
fn connect_end_stream(ct: Option<http::HeaderValue>, message: &str) -> Response<EdgeBody> {
    let json = format!(
        "{{\"error\":{{\"code\":\"{}\",\"message\":{}}}}}",
        RESOURCE_EXHAUSTED.connect,
        json_string(message)
    );
    let mut frame = BytesMut::with_capacity(5 + json.len());
    frame.put_u8(2);
    frame.put_u32(json.len() as u32);
    frame.put_slice(json.as_bytes());
    let mut res = Response::new(EdgeBody::full(frame.freeze()));
    *res.status_mut() = StatusCode::OK;
    if let Some(ct) = ct {
        res.headers_mut().insert(CONTENT_TYPE, ct);
    }
    res
}

/// A response body that holds its stream's budget slot until it ends or is dropped.
pub struct Budgeted {
    body: EdgeBody,
    slot: Option<Slot<String>>,
}

impl Budgeted {
    pub fn new(body: EdgeBody, slot: Option<Slot<String>>) -> Budgeted {
        Budgeted { body, slot }
    }
}

impl Body for Budgeted {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.slot = None; // the stream has ended: give its slot back now
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(ct: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static(ct));
        h
    }

    #[test]
    fn refusals_name_the_budget_and_its_number() {
        let (reason, msg) = stream_refusal(Over::PerKey { limit: 1024 });
        assert_eq!(reason, "stream_client_budget");
        assert_eq!(
            msg,
            "stream budget: 1024 open streams for this client certificate (limit 1024)"
        );
        let src = Source::of("2001:db8::7".parse().unwrap());
        let (reason, msg) = connection_refusal(Over::PerKey { limit: 64 }, src);
        assert_eq!(reason, "connection_source_budget");
        assert_eq!(
            msg,
            "connection budget: 64 connections open from 2001:db8::/64 (limit 64)"
        );
        assert_eq!(
            connection_refusal(Over::Overall { limit: 2 }, src).0,
            "connection_budget"
        );
    }

    #[test]
    fn exhausted_speaks_each_protocol() {
        let g = exhausted(&headers("application/grpc"), Version::HTTP_2, "over");
        assert_eq!(g.status(), 200);
        assert_eq!(g.headers()["grpc-status"], "8");
        let c = exhausted(&headers("application/json"), Version::HTTP_11, "over");
        assert_eq!(c.status(), 429);
        let s = exhausted(
            &headers("application/connect+proto"),
            Version::HTTP_2,
            "over",
        );
        assert_eq!(s.status(), 200);
        assert_eq!(s.headers()[CONTENT_TYPE], "application/connect+proto");
    }

    #[test]
    fn maintenance_callers_count_by_source() {
        let src = Source::of("10.0.0.1".parse().unwrap());
        assert_eq!(client_key(&Identity::maintenance(), src), "source 10.0.0.1");
        let id = Identity {
            role: "os:admin",
            name: "a".into(),
            serial: "0a".into(),
            maintenance: false,
        };
        assert_eq!(client_key(&id, src), "serial 0a");
    }
}
