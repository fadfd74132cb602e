//! The listening socket, with an accept queue deep enough for a flood.
//! Under 4096 slow handshakes from 16 addresses (each closed by the
//! handshake budget is reopened by its attacker), connections arrive in
//! bursts of thousands: with tokio's default listen backlog (128, as std's) the
//! kernel's accept queue overflowed and dropped SYNs, the certificate client's
//! among them, which its kernel resends after 1 s, then 2 s (the 1.0–3.9 s
//! calls bench/attack_handshakes.ts measured; the handshake budget itself
//! served that client in milliseconds). A queued connection costs the kernel
//! a socket, not the edge: it holds no TLS state until accepted, and the
//! accept loop admits it to the handshake budget at once.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// Connections the kernel may hold completed and not yet accepted; the
/// kernel caps it at `net.core.somaxconn` (4096 by default since Linux 5.4).
pub const LISTEN_BACKLOG: u32 = 4096;

/// Listens on `addr` with [`LISTEN_BACKLOG`]. Within a Tokio runtime.
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    // As std's and tokio's bind: a restart may listen while old connections linger.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;
    use std::time::Duration;

    /// Far more than tokio's default backlog (128) holds, within the host's cap.
    const BURST: usize = 2000;

    #[tokio::test]
    async fn the_accept_queue_holds_a_burst_nobody_accepted_yet() {
        let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .expect("net.core.somaxconn")
            .trim()
            .parse()
            .expect("a number");
        assert!(
            somaxconn > BURST,
            "this host caps listen backlogs at net.core.somaxconn={somaxconn}; the test needs > {BURST}"
        );
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        // Nothing accepts: each connection completes in the kernel and waits in the queue.
        // Over a full queue the kernel drops the SYN and connect waits for its resend (1 s).
        let mut held = Vec::with_capacity(BURST);
        for i in 0..BURST {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(500)) {
                Ok(s) => held.push(s),
                Err(e) => panic!("connection {i} of {BURST} not queued: {e}"),
            }
        }
        assert_eq!(held.len(), BURST);
        drop(listener);
    }

    #[tokio::test]
    async fn binds_ipv6_and_picks_a_port() {
        let l = bind("[::1]:0".parse().unwrap()).unwrap();
        assert!(l.local_addr().unwrap().port() > 0);
    }
}
