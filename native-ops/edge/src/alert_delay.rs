//! Holds back what the server writes after the client's second flight until
//! the handshake's outcome is known, so a refusal's TLS alert goes out a
//! moment later than the failure. Why: with TLS 1.3 the alert follows the
//! client's Finished at once, and Deno 2.9.3's node:http2 client (machinectl,
//! connect-node) throws a socket error that arrives in the same tick as its
//! session's `connect` as uncaught, killing the client instead of failing the
//! call. Deno's own TLS server, whose alert came ~5 ms later, never hit it.
//! On success nothing is held (no session tickets are sent); a held write is
//! released after the delay in any case (a HelloRetryRequest's second flight).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

/// How long a held write waits.
pub const ALERT_DELAY: Duration = Duration::from_millis(50);

/// A TCP stream that holds writes in the phase described above.
pub struct AlertDelay {
    tcp: TcpStream,
    wrote: bool,
    holding: bool,
    released: bool,
    held: Vec<u8>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl AlertDelay {
    pub fn new(tcp: TcpStream) -> AlertDelay {
        AlertDelay {
            tcp,
            wrote: false,
            holding: false,
            released: false,
            held: Vec::new(),
            timer: None,
        }
    }

    /// The handshake succeeded: write through from now on.
    pub fn release(&mut self) {
        self.released = true;
        self.holding = false;
    }

    /// The handshake failed: send what is held (the alert) after the delay; the stream back.
    pub async fn send_held(mut self) -> TcpStream {
        if !self.held.is_empty() {
            tokio::time::sleep(ALERT_DELAY).await;
            let _ = self.tcp.write_all(&self.held).await;
        }
        self.tcp
    }

    /// Writes out held bytes once the delay has passed; Pending until then.
    fn poll_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.held.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(ALERT_DELAY)));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        while !self.held.is_empty() {
            let n = match Pin::new(&mut self.tcp).poll_write(cx, &self.held) {
                Poll::Ready(Ok(n)) => n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            self.held.drain(..n);
        }
        self.timer = None;
        self.holding = false;
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for AlertDelay {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if !this.released && this.wrote && buf.filled().len() > before {
            this.holding = true; // the client's second flight: what we write next may be an alert
        }
        r
    }
}

impl AsyncWrite for AlertDelay {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.holding {
            this.held.extend_from_slice(data);
            return Poll::Ready(Ok(data.len()));
        }
        if let Poll::Ready(Err(e)) = this.poll_held(cx) {
            return Poll::Ready(Err(e));
        }
        if !this.held.is_empty() {
            return Poll::Pending;
        }
        this.wrote = true;
        Pin::new(&mut this.tcp).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.holding && this.held.is_empty() {
            return Pin::new(&mut this.tcp).poll_flush(cx);
        }
        match this.poll_held(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.tcp).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.poll_held(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.tcp).poll_shutdown(cx),
            other => other,
        }
    }
}
