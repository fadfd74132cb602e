//! The response body the edge sends: machined's frames as they arrive (never
//! decoded; hyper polls the next frame only once the client has window for
//! it, which is the back-pressure), or a short reply of the edge's own. It
//! holds the connection's in-flight guard, so a connection is idle only once
//! every response has ended, and can append the edge's metrics to `/metrics`.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use crate::upstream_pool::UpstreamCall;

/// Counts a connection's requests in flight and when the last one ended.
#[derive(Debug)]
pub struct Activity {
    inflight: AtomicUsize,
    last: Mutex<Instant>,
}

impl Activity {
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            inflight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        })
    }

    /// A request starts; the guard ends it when dropped.
    pub fn start(self: &Arc<Self>) -> InFlight {
        self.inflight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// How long the connection has had nothing in flight (zero while busy).
    pub fn idle_for(&self) -> std::time::Duration {
        if self.inflight.load(Ordering::Relaxed) > 0 {
            return std::time::Duration::ZERO;
        }
        self.last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }
}

/// One request in flight.
#[derive(Debug)]
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        self.0.inflight.fetch_sub(1, Ordering::Relaxed);
    }
}

enum Inner {
    Upstream(Incoming),
    Full(Option<Bytes>),
    /// A reply the edge makes itself over time (the Watch fan-out's streams).
    Boxed(Pin<Box<dyn Body<Data = Bytes, Error = Infallible> + Send>>),
}

/// See the module doc.
pub struct EdgeBody {
    inner: Inner,
    tail: Option<Bytes>,
    _inflight: Option<InFlight>,
    /// The upstream call this body is machined's reply to, finished when the reply ends.
    call: Option<UpstreamCall>,
}

impl EdgeBody {
    pub fn upstream(
        body: Incoming,
        inflight: InFlight,
        tail: Option<Bytes>,
        call: UpstreamCall,
    ) -> EdgeBody {
        EdgeBody {
            inner: Inner::Upstream(body),
            tail,
            _inflight: Some(inflight),
            call: Some(call),
        }
    }

    /// A body of the edge's own, holding the request's in-flight guard.
    pub fn boxed<B>(body: B, inflight: InFlight) -> EdgeBody
    where
        B: Body<Data = Bytes, Error = Infallible> + Send + 'static,
    {
        EdgeBody {
            inner: Inner::Boxed(Box::pin(body)),
            tail: None,
            _inflight: Some(inflight),
            call: None,
        }
    }

    pub fn full(bytes: impl Into<Bytes>) -> EdgeBody {
        let b: Bytes = bytes.into();
        EdgeBody {
            inner: Inner::Full(if b.is_empty() { None } else { Some(b) }),
            tail: None,
            _inflight: None,
            call: None,
        }
    }
}

impl Drop for EdgeBody {
    fn drop(&mut self) {
        // hyper stops polling once is_end_stream says so: machined's reply ended all the same.
        if let (Inner::Upstream(body), Some(c)) = (&self.inner, self.call.as_mut()) {
            if body.is_end_stream() {
                c.finish();
            }
        }
    }
}

impl Body for EdgeBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        match &mut this.inner {
            Inner::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Inner::Boxed(b) => b
                .as_mut()
                .poll_frame(cx)
                .map(|f| f.map(|r| r.map_err(|e| match e {}))),
            Inner::Upstream(body) => match Pin::new(body).poll_frame(cx) {
                Poll::Ready(None) => {
                    if let Some(c) = this.call.as_mut() {
                        c.finish();
                    }
                    Poll::Ready(this.tail.take().map(|t| Ok(Frame::data(t))))
                }
                // machined reset its stream (Deno's HTTP/2 server resets a stream it
                // answered without reading the request, e.g. a 404): end ours
                // cleanly. An error here would make hyper reset the client's stream,
                // and h2 drops the reply's still-queued HEADERS with it. A stream
                // cut short this way lacks its trailers, which the client reports.
                Poll::Ready(Some(Err(_))) => {
                    this.tail = None;
                    Poll::Ready(None)
                }
                other => other,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            Inner::Full(b) => b.is_none(),
            Inner::Boxed(b) => b.is_end_stream(),
            Inner::Upstream(body) => self.tail.is_none() && body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Inner::Full(None) => SizeHint::with_exact(0),
            Inner::Boxed(b) => b.size_hint(),
            Inner::Upstream(body) if self.tail.is_none() => body.size_hint(),
            Inner::Upstream(_) => SizeHint::default(),
        }
    }
}
