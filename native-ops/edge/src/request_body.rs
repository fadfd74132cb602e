//! The client's request body on its way to machined. machined may answer
//! before it has read the whole request (a 404 for an unknown method, a
//! refusal) and then reset its stream; the upstream connection drops the body
//! unread. h2 then ends the client's stream with RST_STREAM(NO_ERROR) right
//! after the answer, which RFC 9113 allows, but some clients (curl 7.88) take
//! for a stream error and drop the answer they had. So a body dropped before
//! its end is read to its end and discarded, within [`DRAIN_TIME`] and
//! [`DRAIN_BYTES`]: the client's stream ends with its own END_STREAM, and a
//! client that keeps sending still gets the reset, at the latest after those.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;

/// How long the rest of an abandoned request body is read.
pub const DRAIN_TIME: Duration = Duration::from_secs(1);
/// How much of it is read (and discarded).
pub const DRAIN_BYTES: usize = 256 * 1024;

/// See the module doc.
pub struct RequestBody {
    inner: Option<Incoming>,
}

impl RequestBody {
    pub fn new(body: Incoming) -> RequestBody {
        RequestBody { inner: Some(body) }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut().inner.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map(|b| b.size_hint())
            .unwrap_or_else(|| SizeHint::with_exact(0))
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let Some(body) = self.inner.take() else {
            return;
        };
        if body.is_end_stream() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(body, DRAIN_TIME, DRAIN_BYTES));
        }
    }
}

/// Reads `body` to its end, or until `limit` or `max_bytes`, and discards it.
/// Returns whether it reached the end.
pub async fn drain<B: Body + Unpin>(mut body: B, limit: Duration, max_bytes: usize) -> bool {
    let mut left = max_bytes;
    let read = async {
        while let Some(Ok(frame)) = body.frame().await {
            let n = frame.data_ref().map_or(0, |d| d.remaining());
            if n > left {
                return false;
            }
            left -= n;
        }
        true
    };
    tokio::time::timeout(limit, read).await.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;
    use std::convert::Infallible;

    /// A body whose client never sends the rest.
    struct Stalled;

    impl Body for Stalled {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn drain_reads_to_the_end_within_its_bounds() {
        let small = Full::new(Bytes::from_static(b"12345"));
        assert!(drain(small, Duration::from_secs(1), 16).await);
        let big = Full::new(Bytes::from(vec![0u8; 32]));
        assert!(!drain(big, Duration::from_secs(1), 16).await);
        assert!(!drain(Stalled, Duration::from_millis(10), 16).await);
    }
}
