//! Forwards one request to machined's internal server over its Unix socket
//! (cleartext HTTP/2): the verified identity overwrites any `x-machined-*`
//! header, the body streams both ways frame by frame, and when machined cannot
//! be reached the client gets Unavailable in its own protocol.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri, Version};
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::UnixStream;

use crate::body::{Activity, EdgeBody};
use crate::identity::{overwrite_identity, Identity};
use crate::metrics::Metrics;
use crate::request_body::RequestBody;
pub use crate::upstream_pool::Upstream;

/// HTTP/2 receive window per upstream stream: a stream the client is not
/// reading holds machined back after this much.
pub const UPSTREAM_STREAM_WINDOW: u32 = 8 * 1024;
/// Wide enough that unread streams never starve the others of connection credit.
pub const UPSTREAM_CONNECTION_WINDOW: u32 = 64 * 1024 * 1024;

/// A new HTTP/2 connection to machined's socket with these receive windows
/// (the forwarded calls' and the Watch fan-out's differ), its driver spawned.
pub async fn connect_upstream<B>(
    socket: &std::path::Path,
    stream_window: u32,
    connection_window: u32,
    max_header_bytes: u32,
) -> Result<SendRequest<B>, String>
where
    B: http_body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .initial_stream_window_size(stream_window)
        .initial_connection_window_size(connection_window)
        .max_header_list_size(max_header_bytes.saturating_mul(4))
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/2 handshake with machined failed: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// The protocol a request speaks, for an error reply in kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Grpc,
    GrpcWeb,
    Connect,
}

impl Protocol {
    pub fn of(content_type: Option<&HeaderValue>) -> Protocol {
        let ct = content_type.and_then(|v| v.to_str().ok()).unwrap_or("");
        if ct.starts_with("application/grpc-web") {
            Protocol::GrpcWeb
        } else if ct.starts_with("application/grpc") {
            Protocol::Grpc
        } else {
            Protocol::Connect
        }
    }
}

/// Where and as whom a request is forwarded.
pub struct Route {
    pub upstream: Arc<Upstream>,
    pub identity: Identity,
    pub activity: Arc<Activity>,
    pub metrics: Arc<Metrics>,
}

/// Forwards `req`; never fails (errors become the protocol's Unavailable).
pub async fn forward(route: &Route, req: Request<Incoming>) -> Response<EdgeBody> {
    // A Watch the fan-out serves (--watch-fanout=edge) never reaches machined on its own.
    let mut req = match crate::fanout::serve(route, req).await {
        Ok(res) => return res,
        Err(req) => req,
    };
    let inflight = route.activity.start();
    let version = req.version();
    let protocol = Protocol::of(req.headers().get(CONTENT_TYPE));
    let metrics_scrape = req.method() == Method::GET && req.uri().path() == "/metrics";
    prepare(&mut req, &route.identity);
    let call = route.upstream.start_call();
    let sent = match route.upstream.sender().await {
        Ok(mut s) => match s.ready().await {
            Ok(()) => s
                .send_request(req.map(RequestBody::new))
                .await
                .map_err(|e| format!("machined: {e}")),
            Err(e) => Err(format!("machined: {e}")),
        },
        Err(e) => Err(e),
    };
    let mut res = match sent {
        Ok(res) => {
            let tail = (metrics_scrape && res.status() == StatusCode::OK)
                .then(|| Bytes::from(route.metrics.render()));
            let (mut parts, body) = res.into_parts();
            if tail.is_some() {
                parts.headers.remove(CONTENT_LENGTH);
            }
            Response::from_parts(parts, EdgeBody::upstream(body, inflight, tail, call))
        }
        Err(e) => {
            route.metrics.upstream_error();
            unavailable(
                protocol,
                &format!("the node's API server is not answering ({e})"),
            )
        }
    };
    *res.version_mut() = version;
    res
}

/// The request as machined receives it: HTTP/2, authority `machined`, the edge's identity headers.
pub fn prepare<B>(req: &mut Request<B>, identity: &Identity) {
    overwrite_identity(req.headers_mut(), identity);
    req.headers_mut().remove(HOST);
    let pq = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    if let Ok(uri) = Uri::try_from(format!("http://machined{pq}")) {
        *req.uri_mut() = uri;
    }
    *req.version_mut() = Version::HTTP_2;
}

/// A status the edge answers itself: gRPC's number, Connect's code and HTTP status.
pub struct Status {
    pub grpc: &'static str,
    pub connect: &'static str,
    pub http: StatusCode,
}

pub const UNAVAILABLE: Status = Status {
    grpc: "14",
    connect: "unavailable",
    http: StatusCode::SERVICE_UNAVAILABLE,
};

pub const RESOURCE_EXHAUSTED: Status = Status {
    grpc: "8",
    connect: "resource_exhausted",
    http: StatusCode::TOO_MANY_REQUESTS,
};

/// Unavailable, as gRPC and gRPC-Web (a trailers-only reply) or Connect (HTTP 503, JSON) say it.
pub fn unavailable(protocol: Protocol, message: &str) -> Response<EdgeBody> {
    reply(protocol, &UNAVAILABLE, message)
}

/// `status` as gRPC and gRPC-Web (a trailers-only reply) or Connect (its HTTP status, JSON) say it.
pub fn reply(protocol: Protocol, status: &Status, message: &str) -> Response<EdgeBody> {
    let b = Response::builder();
    let encoded = crate::identity::encode_uri_component(message);
    let res = match protocol {
        Protocol::Grpc | Protocol::GrpcWeb => b
            .status(StatusCode::OK)
            .header(
                CONTENT_TYPE,
                if protocol == Protocol::Grpc {
                    "application/grpc"
                } else {
                    "application/grpc-web+proto"
                },
            )
            .header("grpc-status", status.grpc)
            .header("grpc-message", encoded)
            .body(EdgeBody::full(Bytes::new())),
        Protocol::Connect => b
            .status(status.http)
            .header(CONTENT_TYPE, "application/json")
            .body(EdgeBody::full(format!(
                "{{\"code\":\"{}\",\"message\":{}}}",
                status.connect,
                json_string(message)
            ))),
    };
    res.unwrap_or_else(|_| Response::new(EdgeBody::full(Bytes::new())))
}

pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_request_carries_only_the_edge_identity() {
        let mut req = Request::builder()
            .uri("/machined.v1.MachineService/Reboot?x=1")
            .header("host", "node:50000")
            .header("x-machined-role", "os:admin")
            .header("x-machined-maintenance", "1")
            .body(())
            .unwrap();
        let id = Identity {
            role: "os:reader",
            name: "reader".into(),
            serial: "01".into(),
            maintenance: false,
        };
        prepare(&mut req, &id);
        assert_eq!(
            req.uri(),
            "http://machined/machined.v1.MachineService/Reboot?x=1"
        );
        assert_eq!(req.version(), Version::HTTP_2);
        assert!(req.headers().get(HOST).is_none());
        assert_eq!(req.headers()["x-machined-role"], "os:reader");
        assert!(req.headers().get("x-machined-maintenance").is_none());
    }

    #[test]
    fn unavailable_speaks_each_protocol() {
        let g = unavailable(Protocol::Grpc, "down");
        assert_eq!(g.status(), 200);
        assert_eq!(g.headers()["grpc-status"], "14");
        let c = unavailable(Protocol::Connect, "say \"x\"");
        assert_eq!(c.status(), 503);
        assert_eq!(
            Protocol::of(Some(&HeaderValue::from_static(
                "application/grpc-web+proto"
            ))),
            Protocol::GrpcWeb
        );
        assert_eq!(
            Protocol::of(Some(&HeaderValue::from_static("application/grpc+proto"))),
            Protocol::Grpc
        );
        assert_eq!(Protocol::of(None), Protocol::Connect);
        assert_eq!(json_string("a\"b\n"), "\"a\\\"b\\u000a\"");
    }
}
