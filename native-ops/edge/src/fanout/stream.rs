//! A client's response body: its share's messages as the share's state hands
//! them out (shared `Bytes`, never copied per client), polled only when the
//! client has HTTP/2 window (hyper's back-pressure), then its status as
//! trailers. Its own `grpc-timeout` ends it with DeadlineExceeded. Dropped
//! (the client gone, or done), it leaves the share.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use http_body::{Body, Frame};
use tokio::time::{Instant, Sleep};

use super::state::{Next, Status};
use super::{Hub, Share};

const DEADLINE_EXCEEDED: u32 = 4;

/// machined's words for a passed deadline (api/server/watch_route.ts).
pub fn deadline_exceeded() -> Status {
    Status::new(DEADLINE_EXCEEDED, "the operation timed out")
}

fn trailers(s: &Status) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("grpc-status", HeaderValue::from(s.code));
    if let Some(m) = &s.message {
        h.insert("grpc-message", m.clone());
    }
    h
}

/// One client of a share; see the module doc.
pub struct FanoutStream {
    hub: Arc<Hub>,
    share: Arc<Share>,
    id: u64,
    deadline: Option<Pin<Box<Sleep>>>,
    done: bool,
}

impl FanoutStream {
    pub fn new(hub: Arc<Hub>, share: Arc<Share>, id: u64, deadline: Option<Instant>) -> Self {
        FanoutStream {
            hub,
            share,
            id,
            deadline: deadline.map(|d| Box::pin(tokio::time::sleep_until(d))),
            done: false,
        }
    }

    fn end(&mut self, s: &Status) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.done = true;
        Poll::Ready(Some(Ok(Frame::trailers(trailers(s)))))
    }
}

impl Body for FanoutStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(d) = this.deadline.as_mut() {
            if d.as_mut().poll(cx).is_ready() {
                return this.end(&deadline_exceeded());
            }
        }
        let next = this.share.lock().next(this.id, cx.waker());
        match next {
            Next::Frame(f) => {
                // The only `overflow` a client is handed is the edge's own marker.
                if f.get(5) == Some(&0x2a) {
                    this.hub
                        .metrics
                        .watch
                        .overflows
                        .fetch_add(1, Ordering::Relaxed);
                }
                Poll::Ready(Some(Ok(Frame::data(f))))
            }
            Next::Pending => Poll::Pending,
            Next::End(s) => this.end(&s),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

impl Drop for FanoutStream {
    fn drop(&mut self) {
        self.hub.leave(&self.share, self.id);
    }
}

/// A reply with no message: its status in trailers, as machined's route writes one.
pub struct StatusOnly(Option<Status>);

impl StatusOnly {
    pub fn new(s: Status) -> StatusOnly {
        StatusOnly(Some(s))
    }
}

impl Body for StatusOnly {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(
            self.get_mut()
                .0
                .take()
                .map(|s| Ok(Frame::trailers(trailers(&s)))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }
}
