//! Upstream connections to machined handed from one client connection to the
//! next. Deno 2.9.3's node:http2 server never frees a session's native state
//! (its nghttp2 session and the Rust `Session` around it, ~25 KiB: the
//! `Http2Session` has no `Drop` and its `Session` holds a global handle to
//! its own JavaScript object), so every connection the edge opens to
//! machined costs machined that much for good; one per client connection
//! (every `machinectl` call, every scrape) was a leak without bound
//! (docs/decisions.md, "The edge hands its upstream connections on").
//!
//! A connection still serves one client connection at a time, which keeps
//! machined's per-connection send gate isolating clients: it is handed on
//! only when every call it carried ended with machined's reply read to its
//! end (nothing held back, nothing reset with bytes unsent that the gate
//! would still count), and the client connection that used it has closed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hyper::client::conn::http2::SendRequest;

use crate::metrics::Metrics;
use crate::proxy::{connect_upstream, UPSTREAM_CONNECTION_WINDOW, UPSTREAM_STREAM_WINDOW};
use crate::request_body::RequestBody;

/// Idle upstream connections kept for the next client connections: enough
/// for bursts of sequential calls, few enough that machined's cost is fixed.
pub const MAX_IDLE: usize = 4;

/// The idle connections, shared by every client connection.
#[derive(Default)]
pub struct UpstreamPool {
    idle: Mutex<Vec<SendRequest<RequestBody>>>,
}

impl UpstreamPool {
    /// An idle connection machined has not closed, if there is one.
    pub fn take(&self) -> Option<SendRequest<RequestBody>> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(s) = idle.pop() {
            if !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    /// Keeps `sender` for the next client connection (dropped, which closes
    /// it, when machined closed it or [`MAX_IDLE`] are kept already).
    pub fn give_back(&self, sender: SendRequest<RequestBody>) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.retain(|s| !s.is_closed());
        if !sender.is_closed() && idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }
}

/// One client connection's HTTP/2 connection to machined, taken from the
/// pool or opened on first use, and again after machined restarts. One client
/// connection at a time, because machined's send gate holds back a whole
/// connection when one stream on it is not read: a client that stops reading
/// holds back only itself. Handed on to the next client connection when this
/// one closes with every call on it ended (upstream_pool.rs).
pub struct Upstream {
    socket: PathBuf,
    sender: tokio::sync::Mutex<Option<SendRequest<RequestBody>>>,
    max_header_bytes: u32,
    pool: Arc<UpstreamPool>,
    metrics: Arc<Metrics>,
    ledger: Arc<CallLedger>,
}

impl Upstream {
    pub fn new(
        socket: PathBuf,
        max_header_bytes: u32,
        pool: Arc<UpstreamPool>,
        metrics: Arc<Metrics>,
    ) -> Upstream {
        Upstream {
            socket,
            sender: tokio::sync::Mutex::new(None),
            max_header_bytes,
            pool,
            metrics,
            ledger: Arc::new(CallLedger::default()),
        }
    }

    /// A call forwarded on this connection starts.
    pub fn start_call(&self) -> UpstreamCall {
        self.ledger.start()
    }

    pub async fn sender(&self) -> Result<SendRequest<RequestBody>, String> {
        let mut held = self.sender.lock().await;
        if let Some(s) = held.as_ref() {
            if !s.is_closed() {
                return Ok(s.clone());
            }
        }
        if let Some(s) = self.pool.take() {
            *held = Some(s.clone());
            return Ok(s);
        }
        let sender = connect_upstream(
            &self.socket,
            UPSTREAM_STREAM_WINDOW,
            UPSTREAM_CONNECTION_WINDOW,
            self.max_header_bytes,
        )
        .await?;
        self.metrics.upstream_connected();
        *held = Some(sender.clone());
        Ok(sender)
    }

    /// The client connection has closed: its upstream connection goes back to
    /// the pool if every call on it ended with machined's reply read to its
    /// end, and is closed otherwise.
    pub fn release(&self) {
        let Ok(mut held) = self.sender.try_lock() else {
            return;
        };
        if let Some(s) = held.take() {
            if self.ledger.clean() {
                self.pool.give_back(s);
            }
        }
    }
}

/// What a client connection's calls left on its upstream connection.
#[derive(Debug, Default)]
pub struct CallLedger {
    open: AtomicUsize,
    cut: AtomicBool,
}

impl CallLedger {
    /// A call starts; [`UpstreamCall::finish`] says its reply was read to its end.
    pub fn start(self: &Arc<Self>) -> UpstreamCall {
        self.open.fetch_add(1, Ordering::AcqRel);
        UpstreamCall {
            ledger: self.clone(),
            finished: false,
        }
    }

    /// Every call ended with its reply read to its end: the connection may serve another client.
    pub fn clean(&self) -> bool {
        self.open.load(Ordering::Acquire) == 0 && !self.cut.load(Ordering::Acquire)
    }
}

/// One call forwarded upstream. Dropped before [`UpstreamCall::finish`] (the
/// client went away, machined reset the stream, the send failed), it marks
/// the connection as not to be handed on.
#[derive(Debug)]
pub struct UpstreamCall {
    ledger: Arc<CallLedger>,
    finished: bool,
}

impl UpstreamCall {
    /// machined's reply has ended.
    pub fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for UpstreamCall {
    fn drop(&mut self) {
        if !self.finished {
            self.ledger.cut.store(true, Ordering::Release);
        }
        self.ledger.open.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_is_clean_only_when_every_call_finished() {
        let ledger = Arc::new(CallLedger::default());
        assert!(ledger.clean());
        let mut a = ledger.start();
        assert!(!ledger.clean(), "a call still open");
        a.finish();
        drop(a);
        assert!(ledger.clean());
        let b = ledger.start();
        drop(b);
        assert!(!ledger.clean(), "a call dropped before its reply ended");
    }
}
