//! A share's upstream call: one Watch to machined, as the client that opened
//! the share, on the fan-out's own HTTP/2 connection (not a client's, so no
//! client's unread streams can hold it back through machined's per-connection
//! send gate; and the edge reads every shared call at once, whatever its
//! clients do). Its messages feed the share's state; its end (trailers, an
//! error, machined gone) becomes every client's status.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::CONTENT_TYPE;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use tokio::sync::Mutex;

use super::state::Status;
use super::wire::Deframer;
use super::{Hub, Share};
use crate::identity::{overwrite_identity, Identity};

/// machined reads a shared call as fast as the edge does: a wide window.
const STREAM_WINDOW: u32 = 1024 * 1024;
const CONNECTION_WINDOW: u32 = 64 * 1024 * 1024;

/// gRPC's codes the edge names.
const UNKNOWN: u32 = 2;
const INTERNAL: u32 = 13;
const UNAVAILABLE: u32 = 14;

/// The fan-out's HTTP/2 connection to machined, opened on first use and again after machined restarts.
pub struct Connection {
    socket: PathBuf,
    sender: Mutex<Option<SendRequest<Full<Bytes>>>>,
    max_header_bytes: u32,
    /// machined's bound on each response message.
    pub max_message: u64,
}

impl Connection {
    pub fn new(socket: PathBuf, max_header_bytes: u32, max_message: u64) -> Connection {
        Connection {
            socket,
            sender: Mutex::new(None),
            max_header_bytes,
            max_message,
        }
    }

    async fn sender(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let mut held = self.sender.lock().await;
        if let Some(s) = held.as_ref().filter(|s| !s.is_closed()) {
            return Ok(s.clone());
        }
        let sender = crate::proxy::connect_upstream(
            &self.socket,
            STREAM_WINDOW,
            CONNECTION_WINDOW,
            self.max_header_bytes,
        )
        .await?;
        *held = Some(sender.clone());
        Ok(sender)
    }
}

/// Runs the share's upstream call to its end, then ends its clients with its status.
pub async fn run(hub: Arc<Hub>, share: Arc<Share>, identity: Identity) {
    let status = call(&hub, &share, &identity).await;
    if status.code == UNAVAILABLE {
        hub.metrics.upstream_error();
    }
    let mut wake = Vec::new();
    share.lock().end(status, &mut wake);
    wake.into_iter().for_each(|w| w.wake());
    hub.ended(&share);
}

fn unavailable(e: impl std::fmt::Display) -> Status {
    Status::new(
        UNAVAILABLE,
        &format!("the node's API server is not answering ({e})"),
    )
}

async fn call(hub: &Hub, share: &Share, identity: &Identity) -> Status {
    let mut framed = BytesMut::with_capacity(5 + share.key.message.len());
    framed.put_u8(0);
    framed.put_u32(share.key.message.len() as u32);
    framed.put_slice(&share.key.message);
    let mut req = Request::new(Full::new(framed.freeze()));
    *req.method_mut() = Method::POST;
    *req.uri_mut() = http::Uri::from_static("http://machined/machined.v1.MachineService/Watch");
    let h = req.headers_mut();
    h.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    h.insert("te", http::HeaderValue::from_static("trailers"));
    overwrite_identity(h, identity);
    let mut sender = match hub.upstream.sender().await {
        Ok(s) => s,
        Err(e) => return unavailable(e),
    };
    if let Err(e) = sender.ready().await {
        return unavailable(format!("machined: {e}"));
    }
    let res = match sender.send_request(req).await {
        Ok(r) => r,
        Err(e) => return unavailable(format!("machined: {e}")),
    };
    if res.headers().contains_key("grpc-status") || res.status() != StatusCode::OK {
        return status_of(res.headers(), Some(res.status()));
    }
    let mut body = res.into_body();
    let mut deframer = Deframer::new(hub.upstream.max_message);
    let mut frames = Vec::new();
    loop {
        let frame = match body.frame().await {
            Some(Ok(f)) => f,
            Some(Err(e)) => return unavailable(format!("machined: {e}")),
            None => return unavailable("machined ended the Watch without a status"),
        };
        let data = match frame.into_data() {
            Ok(d) => d,
            Err(f) => match f.into_trailers() {
                Ok(t) => return status_of(&t, None),
                Err(_) => continue,
            },
        };
        if let Err(e) = deframer.push(data, &mut frames) {
            return Status::new(INTERNAL, &format!("machined's Watch stream: {e}"));
        }
        let mut wake = Vec::new();
        let applied = {
            let mut st = share.lock();
            frames.drain(..).try_for_each(|f| st.upstream(f, &mut wake))
        };
        wake.into_iter().for_each(|w| w.wake());
        if let Err(e) = applied {
            return Status::new(INTERNAL, &format!("machined's Watch stream: {e}"));
        }
    }
}

/// A call's status from its trailers (or trailers-only headers); an HTTP
/// error without one is mapped as gRPC says (doc/http-grpc-status-mapping).
fn status_of(h: &HeaderMap, http: Option<StatusCode>) -> Status {
    let code = h
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u32>().ok());
    let code = match (code, http.map(|s| s.as_u16())) {
        (Some(c), _) => c,
        (None, None | Some(200)) => UNKNOWN,
        (None, Some(400)) => INTERNAL,
        (None, Some(401)) => 16,
        (None, Some(403)) => 7,
        (None, Some(404)) => 12,
        (None, Some(429 | 502 | 503 | 504)) => UNAVAILABLE,
        (None, Some(_)) => UNKNOWN,
    };
    Status {
        code,
        message: h.get("grpc-message").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_come_from_trailers_or_the_http_status() {
        let mut t = HeaderMap::new();
        t.insert("grpc-status", "5".parse().unwrap());
        t.insert("grpc-message", "unknown%20type".parse().unwrap());
        let s = status_of(&t, None);
        assert_eq!(s.code, 5);
        assert_eq!(s.message.unwrap(), "unknown%20type");
        assert_eq!(
            status_of(&HeaderMap::new(), Some(StatusCode::NOT_FOUND)).code,
            12
        );
        assert_eq!(
            status_of(&HeaderMap::new(), Some(StatusCode::SERVICE_UNAVAILABLE)).code,
            14
        );
        assert_eq!(status_of(&HeaderMap::new(), None).code, UNKNOWN);
    }
}
