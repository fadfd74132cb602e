//! Which requests the fan-out serves, and how it reads one: exactly those
//! machined's watch route would take (api/server/watch_route.ts: POST to the
//! Watch path, uncompressed gRPC, a caller that is not a maintenance caller),
//! over HTTP/2. The request message is read as that route reads it, with the
//! same refusals in the same words; machined decides the rest on the shared call.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Request, Response, StatusCode, Version};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::time::Instant;

use super::state::Status;
use super::stream::{FanoutStream, StatusOnly};
use super::{hub, Key};
use crate::body::{EdgeBody, InFlight};
use crate::identity::Identity;
use crate::proxy::Route;

/// The HTTP/2 path of MachineService/Watch.
pub const WATCH_PATH: &str = "/machined.v1.MachineService/Watch";

const INVALID_ARGUMENT: u32 = 3;
const RESOURCE_EXHAUSTED: u32 = 8;
const CANCELLED: u32 = 1;

/// Serves `req` from a shared Watch, or hands it back to be forwarded.
pub async fn serve(
    route: &Route,
    req: Request<Incoming>,
) -> Result<Response<EdgeBody>, Request<Incoming>> {
    let Some(hub) = hub() else { return Err(req) };
    if !eligible(&req, &route.identity) {
        return Err(req);
    }
    let inflight = route.activity.start();
    let deadline = match req.headers().get("grpc-timeout").map(parse_timeout) {
        None => None,
        Some(Ok(d)) => Some(Instant::now() + d),
        Some(Err(status)) => return Ok(reply(StatusOnly::new(status), inflight)),
    };
    let read = read_message(req.into_body(), hub.read_max_bytes);
    let read = match deadline {
        Some(d) => tokio::time::timeout_at(d, read)
            .await
            .unwrap_or_else(|_| Err(super::stream::deadline_exceeded())),
        None => read.await,
    };
    let message = match read {
        Ok(m) => m,
        Err(status) => return Ok(reply(StatusOnly::new(status), inflight)),
    };
    let key = Key {
        message,
        role: route.identity.role,
    };
    let (share, id) = hub.join(key, &route.identity);
    let stream = FanoutStream::new(hub.clone(), share, id, deadline);
    Ok(reply(stream, inflight))
}

/// The conditions of machined's watch route, and HTTP/2.
fn eligible<B>(req: &Request<B>, identity: &Identity) -> bool {
    let h = req.headers();
    req.version() == Version::HTTP_2
        && req.method() == Method::POST
        && req.uri().path_and_query().map(|p| p.as_str()) == Some(WATCH_PATH)
        && h.get(CONTENT_TYPE).is_some_and(grpc_proto)
        && h.get("grpc-encoding").is_none_or(|v| v == "identity")
        && !identity.maintenance
}

/// `application/grpc` or `application/grpc+proto`, with or without parameters.
fn grpc_proto(v: &HeaderValue) -> bool {
    let s = v.as_bytes();
    [&b"application/grpc"[..], b"application/grpc+proto"]
        .iter()
        .any(|p| {
            s.strip_prefix(*p)
                .is_some_and(|rest| rest.is_empty() || rest[0] == b';')
        })
}

/// `grpc-timeout` (`500m`, `3S`, ... at most 8 digits), or machined's refusal.
fn parse_timeout(v: &HeaderValue) -> Result<Duration, Status> {
    let s = v.to_str().unwrap_or("");
    let bad = || {
        Status::new(
            INVALID_ARGUMENT,
            &format!(
                "protocol error: invalid grpc timeout value: {}",
                String::from_utf8_lossy(v.as_bytes())
            ),
        )
    };
    if s.len() < 2 || s.len() > 9 {
        return Err(bad());
    }
    let (digits, unit) = s.split_at(s.len() - 1);
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    Ok(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return Err(bad()),
    })
}

/// The request's one length-prefixed message, read to the end of the request.
async fn read_message(mut body: Incoming, max: u64) -> Result<Bytes, Status> {
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Status::new(CANCELLED, "the client cancelled the call"))?;
        if let Ok(d) = frame.into_data() {
            check_size(buf.len() + d.len(), max)?;
            buf.extend_from_slice(&d);
        }
    }
    message_of(buf.freeze(), max)
}

fn check_size(size: usize, max: u64) -> Result<(), Status> {
    if size as u64 > max + 5 {
        return Err(Status::new(
            RESOURCE_EXHAUSTED,
            &format!("message size is larger than configured readMaxBytes {max}"),
        ));
    }
    Ok(())
}

/// The message inside a whole request body, refused as machined refuses it.
fn message_of(body: Bytes, max: u64) -> Result<Bytes, Status> {
    check_size(body.len(), max)?;
    let size = body.len();
    if size < 5 {
        return Err(Status::new(
            INVALID_ARGUMENT,
            "protocol error: missing request message",
        ));
    }
    if body[0] & 1 != 0 {
        return Err(Status::new(
            INVALID_ARGUMENT,
            "protocol error: compressed message without grpc-encoding",
        ));
    }
    let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    if 5 + length != size {
        return Err(Status::new(
            INVALID_ARGUMENT,
            &format!(
                "protocol error: promised {length} bytes in the request message, got {}",
                size - 5
            ),
        ));
    }
    Ok(body.slice(5..))
}

/// machined's reply head: 200 and the gRPC content type; the status comes in trailers.
fn reply<B>(body: B, inflight: InFlight) -> Response<EdgeBody>
where
    B: http_body::Body<Data = Bytes, Error = std::convert::Infallible> + Send + 'static,
{
    let mut res = Response::new(EdgeBody::boxed(body, inflight));
    *res.status_mut() = StatusCode::OK;
    *res.version_mut() = Version::HTTP_2;
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/grpc+proto"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: Method, path: &str, ct: &str, enc: Option<&str>) -> Request<()> {
        let mut b = Request::builder()
            .method(method)
            .uri(format!("http://node{path}"))
            .version(Version::HTTP_2)
            .header(CONTENT_TYPE, ct);
        if let Some(e) = enc {
            b = b.header("grpc-encoding", e);
        }
        b.body(()).unwrap()
    }

    fn reader() -> Identity {
        Identity {
            role: "os:reader",
            name: "r".into(),
            serial: "01".into(),
            maintenance: false,
        }
    }

    #[test]
    fn takes_what_machined_s_watch_route_takes() {
        let id = reader();
        let ok = |r: &Request<()>| eligible(r, &id);
        assert!(ok(&req(Method::POST, WATCH_PATH, "application/grpc", None)));
        assert!(ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/grpc+proto",
            Some("identity")
        )));
        assert!(ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/grpc;charset=x",
            None
        )));
        assert!(!ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/grpc",
            Some("gzip")
        )));
        assert!(!ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/grpc-web",
            None
        )));
        assert!(!ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/grpc+json",
            None
        )));
        assert!(!ok(&req(
            Method::POST,
            WATCH_PATH,
            "application/proto",
            None
        )));
        assert!(!ok(&req(Method::GET, WATCH_PATH, "application/grpc", None)));
        assert!(!ok(&req(
            Method::POST,
            "/machined.v1.MachineService/Get",
            "application/grpc",
            None
        )));
        assert!(!ok(&req(
            Method::POST,
            &format!("{WATCH_PATH}?x=1"),
            "application/grpc",
            None
        )));
        let mut h1 = req(Method::POST, WATCH_PATH, "application/grpc", None);
        *h1.version_mut() = Version::HTTP_11;
        assert!(!ok(&h1));
        let r = req(Method::POST, WATCH_PATH, "application/grpc", None);
        assert!(!eligible(&r, &Identity::maintenance()));
    }

    #[test]
    fn timeouts_parse_as_machined_parses_them() {
        let t = |s: &'static str| parse_timeout(&HeaderValue::from_static(s));
        assert_eq!(t("500m"), Ok(Duration::from_millis(500)));
        assert_eq!(t("3S"), Ok(Duration::from_secs(3)));
        assert_eq!(t("2M"), Ok(Duration::from_secs(120)));
        assert_eq!(t("99999999n"), Ok(Duration::from_nanos(99_999_999)));
        for bad in ["", "5", "m", "123456789m", "5x", "-5m", "5 m"] {
            let e = t(bad).unwrap_err();
            assert_eq!(e.code, INVALID_ARGUMENT, "{bad}");
        }
    }

    #[test]
    fn request_messages_are_refused_in_machined_s_words() {
        let m = |b: &'static [u8]| message_of(Bytes::from_static(b), 8);
        assert_eq!(
            m(&[0, 0, 0, 0, 2, 0x0a, 0]).unwrap(),
            Bytes::from_static(&[0x0a, 0])
        );
        let msg = |r: Result<Bytes, Status>| {
            let s = r.unwrap_err();
            (s.code, s.message.unwrap().to_str().unwrap().to_string())
        };
        assert_eq!(
            msg(m(&[0, 0])),
            (
                3,
                "protocol%20error%3A%20missing%20request%20message".into()
            )
        );
        assert_eq!(msg(m(&[1, 0, 0, 0, 0])).0, 3);
        assert_eq!(
            msg(m(&[0, 0, 0, 0, 3, 1])),
            (3, "protocol%20error%3A%20promised%203%20bytes%20in%20the%20request%20message%2C%20got%201".into())
        );
        assert_eq!(msg(m(&[0, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9])).0, 8);
    }
}
