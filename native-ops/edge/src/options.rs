//! The edge's command line: apid's flags (api/edge/apid_options.ts) plus the
//! limits only the edge enforces. `--flag=value` or `--flag value`.

use std::net::SocketAddr;
use std::time::Duration;

/// Everything the edge is told at start.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// ca.crt (or the `maintenance` marker), server.crt, server.key.
    pub pki_dir: String,
    /// machined's internal API socket.
    pub socket: String,
    pub listen: SocketAddr,
    /// Largest request body (message) accepted; larger ones are machined's to refuse,
    /// the edge only bounds an HTTP/1.1 body it cannot frame.
    pub read_max_bytes: u64,
    pub write_max_bytes: u64,
    /// HTTP/2 streams at once per client connection.
    pub max_concurrent_streams: u32,
    /// Request header block (HTTP/2 header list, HTTP/1.1 head) size.
    pub max_header_bytes: u32,
    pub handshake_timeout: Duration,
    /// A connection with no request in flight for this long is closed.
    pub idle_timeout: Duration,
    /// TLS handshakes in progress on the node; a newcomer over it evicts the
    /// oldest of the source holding the most (handshakes.rs).
    pub max_handshakes: usize,
    /// TLS handshakes in progress per source (IPv4 address, IPv6 /64); a
    /// newcomer over it evicts the oldest of its own source.
    pub max_handshakes_per_source: usize,
    /// Connections past their handshake on the node.
    pub max_connections: usize,
    /// Connections past their handshake per source (IPv4 address, IPv6 /64).
    pub max_connections_per_client: usize,
    /// Requests in flight per client certificate (in maintenance mode, per source).
    pub max_streams_per_client: usize,
    /// Requests in flight on the node.
    pub max_streams: usize,
    /// Tokio worker threads.
    pub threads: usize,
    /// Where Watch streams are fanned out (`--watch-fanout=edge|machined`).
    pub watch_fanout: WatchFanout,
}

/// Where a gRPC Watch is fanned out to its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchFanout {
    /// One shared upstream Watch per request and role, repeated by the edge (fanout/).
    Edge,
    /// Each Watch forwarded as its own call, like every other request.
    Machined,
}

pub const DEFAULTS: Options = Options {
    pki_dir: String::new(),
    socket: String::new(),
    listen: SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 50000),
    read_max_bytes: 4 * 1024 * 1024,
    write_max_bytes: 4 * 1024 * 1024,
    max_concurrent_streams: 100,
    max_header_bytes: 16 * 1024,
    handshake_timeout: Duration::from_secs(5),
    idle_timeout: Duration::from_secs(300),
    max_handshakes: 128,
    max_handshakes_per_source: 16,
    max_connections: 512,
    max_connections_per_client: 64,
    max_streams_per_client: 1024,
    max_streams: 2048,
    threads: 2,
    watch_fanout: WatchFanout::Edge,
};

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = DEFAULTS.clone();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (flag, value) = match arg.split_once('=') {
            Some((f, v)) => (f.to_string(), v.to_string()),
            None => {
                i += 1;
                let v = args.get(i).ok_or(format!("{arg} needs a value"))?;
                (arg.clone(), v.clone())
            }
        };
        i += 1;
        match flag.as_str() {
            "--pki-dir" => o.pki_dir = value,
            "--socket" => o.socket = value,
            "--listen" => o.listen = listen(&value)?,
            "--read-max-bytes" => o.read_max_bytes = positive(&flag, &value)?,
            "--write-max-bytes" => o.write_max_bytes = positive(&flag, &value)?,
            "--max-concurrent-streams" => {
                o.max_concurrent_streams = positive(&flag, &value)? as u32
            }
            "--max-header-bytes" => o.max_header_bytes = positive(&flag, &value)?.max(8192) as u32,
            "--handshake-timeout-ms" => {
                o.handshake_timeout = Duration::from_millis(positive(&flag, &value)?)
            }
            "--idle-timeout-ms" => o.idle_timeout = Duration::from_millis(positive(&flag, &value)?),
            "--max-handshakes" => o.max_handshakes = positive(&flag, &value)? as usize,
            "--max-handshakes-per-source" => {
                o.max_handshakes_per_source = positive(&flag, &value)? as usize
            }
            "--max-connections" => o.max_connections = positive(&flag, &value)? as usize,
            "--max-connections-per-client" => {
                o.max_connections_per_client = positive(&flag, &value)? as usize
            }
            "--max-streams-per-client" => {
                o.max_streams_per_client = positive(&flag, &value)? as usize
            }
            "--max-streams" => o.max_streams = positive(&flag, &value)? as usize,
            "--threads" => o.threads = positive(&flag, &value)? as usize,
            "--watch-fanout" => {
                o.watch_fanout = match value.as_str() {
                    "edge" => WatchFanout::Edge,
                    "machined" => WatchFanout::Machined,
                    _ => {
                        return Err(format!(
                            "--watch-fanout must be edge or machined, got \"{value}\""
                        ))
                    }
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if o.pki_dir.is_empty() {
        return Err("needs --pki-dir".into());
    }
    if o.socket.is_empty() {
        return Err("needs --socket".into());
    }
    Ok(o)
}

/// `--print-defaults`: every budget the edge applies unless told otherwise,
/// as one JSON object keyed like api/edge/budgets.ts, whose test compares the two.
pub fn defaults_json() -> String {
    let d = &DEFAULTS;
    let fields: [(&str, u64); 19] = [
        ("max_handshakes", d.max_handshakes as u64),
        (
            "max_handshakes_per_source",
            d.max_handshakes_per_source as u64,
        ),
        (
            "handshake_timeout_ms",
            d.handshake_timeout.as_millis() as u64,
        ),
        ("listen_backlog", crate::listen::LISTEN_BACKLOG as u64),
        ("max_connections", d.max_connections as u64),
        (
            "max_connections_per_client",
            d.max_connections_per_client as u64,
        ),
        (
            "refused_connection_ms",
            crate::admission::REFUSED_CONNECTION.as_millis() as u64,
        ),
        ("idle_timeout_ms", d.idle_timeout.as_millis() as u64),
        ("max_concurrent_streams", d.max_concurrent_streams as u64),
        ("max_streams_per_client", d.max_streams_per_client as u64),
        ("max_streams", d.max_streams as u64),
        ("max_header_bytes", d.max_header_bytes as u64),
        ("read_max_bytes", d.read_max_bytes),
        (
            "upstream_stream_window",
            crate::proxy::UPSTREAM_STREAM_WINDOW as u64,
        ),
        (
            "client_stream_window",
            crate::admission::CLIENT_STREAM_WINDOW as u64,
        ),
        (
            "client_connection_window",
            crate::admission::CLIENT_CONNECTION_WINDOW as u64,
        ),
        (
            "watch_client_frames",
            crate::fanout::state::CLIENT_CAPACITY_FRAMES,
        ),
        (
            "watch_client_bytes",
            crate::fanout::state::CLIENT_CAPACITY_BYTES,
        ),
        ("watch_log_bytes", crate::fanout::state::NODE_LOG_BYTES),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", body.join(","))
}

fn positive(flag: &str, v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if n > 0 && n <= u32::MAX as u64 * 64 => Ok(n),
        _ => Err(format!("{flag} must be a positive integer, got \"{v}\"")),
    }
}

/// `host:port`, `[v6]:port`, or `:port` (every address).
fn listen(v: &str) -> Result<SocketAddr, String> {
    let bad = || format!("--listen must be host:port, got \"{v}\"");
    let (host, port) = v.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = match host {
        "" => "0.0.0.0",
        "localhost" => "127.0.0.1",
        h => h,
    };
    let ip = host.parse().map_err(|_| bad())?;
    Ok(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_apid_flags_and_limits() {
        let o = parse(&args(&[
            "--pki-dir=/p",
            "--socket",
            "/s",
            "--listen=[::1]:0",
            "--max-concurrent-streams=7",
            "--idle-timeout-ms=1500",
        ]))
        .unwrap();
        assert_eq!(o.pki_dir, "/p");
        assert_eq!(o.socket, "/s");
        assert_eq!(o.listen, "[::1]:0".parse().unwrap());
        assert_eq!(o.max_concurrent_streams, 7);
        assert_eq!(o.idle_timeout, Duration::from_millis(1500));
        assert_eq!(o.handshake_timeout, DEFAULTS.handshake_timeout);
        assert_eq!(o.watch_fanout, WatchFanout::Edge);
        let m = parse(&args(&[
            "--pki-dir=/p",
            "--socket=/s",
            "--watch-fanout=machined",
        ]))
        .unwrap();
        assert_eq!(m.watch_fanout, WatchFanout::Machined);
    }

    #[test]
    fn parses_budgets() {
        let o = parse(&args(&[
            "--pki-dir=/p",
            "--socket=/s",
            "--max-handshakes=3",
            "--max-handshakes-per-source=2",
            "--max-connections=5",
            "--max-connections-per-client=4",
            "--max-streams-per-client=7",
            "--max-streams=9",
        ]))
        .unwrap();
        assert_eq!(
            (
                o.max_handshakes,
                o.max_handshakes_per_source,
                o.max_connections
            ),
            (3, 2, 5)
        );
        assert_eq!(
            (
                o.max_connections_per_client,
                o.max_streams_per_client,
                o.max_streams
            ),
            (4, 7, 9)
        );
        let d = defaults_json();
        assert!(d.starts_with("{\"max_handshakes\":128,"), "{d}");
        assert!(d.contains("\"max_streams\":2048"), "{d}");
    }

    #[test]
    fn refuses_bad_flags() {
        assert!(parse(&args(&["--socket=/s"]))
            .unwrap_err()
            .contains("--pki-dir"));
        assert!(parse(&args(&["--pki-dir=/p", "--socket=/s", "--listen=x"])).is_err());
        assert!(parse(&args(&["--pki-dir=/p", "--socket=/s", "--threads=0"])).is_err());
        assert!(parse(&args(&["--pki-dir=/p", "--socket=/s", "--bogus=1"])).is_err());
        assert!(parse(&args(&["--pki-dir=/p", "--socket=/s", "--watch-fanout=x"])).is_err());
    }
}
