//! The edge's own counters, appended to machined's text on `GET /metrics`
//! under the `machined_edge_` prefix (one prefix per process; counters end in `_total`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Gauges read at render time: (name, help, value).
pub type Gauges = Box<dyn Fn() -> Vec<(&'static str, &'static str, usize)> + Send + Sync>;

/// Counters shared by every connection.
#[derive(Default)]
pub struct Metrics {
    accepted: AtomicU64,
    open: AtomicI64,
    refused: Mutex<BTreeMap<&'static str, u64>>,
    /// Refusals by a budget (handshakes, connections, streams), by reason.
    over_budget: Mutex<BTreeMap<&'static str, u64>>,
    upstream_errors: AtomicU64,
    upstream_connections: AtomicU64,
    /// The Watch fan-out's counters (fanout/mod.rs).
    pub watch: crate::fanout::WatchMetrics,
    gauges: OnceLock<Gauges>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    pub fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
        self.open.fetch_add(1, Ordering::Relaxed);
    }

    /// Client connections past their handshake and not yet closed.
    pub fn open(&self) -> i64 {
        self.open.load(Ordering::Relaxed)
    }

    pub fn closed(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }

    /// A handshake refused, by reason (a certificate problem, `timeout`, `tls`).
    pub fn refused(&self, reason: &'static str) {
        let mut m = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry(reason).or_default() += 1;
    }

    /// A handshake, connection or request refused by a budget, by reason
    /// (`handshake_budget`, `connection_source_budget`, `stream_client_budget`...).
    pub fn over_budget(&self, reason: &'static str) {
        let mut m = self.over_budget.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry(reason).or_default() += 1;
    }

    /// What the budgets hold now, rendered with the counters (set once, at start).
    pub fn set_gauges(&self, gauges: Gauges) {
        let _ = self.gauges.set(gauges);
    }

    /// A new connection to machined (not one handed on from the pool).
    pub fn upstream_connected(&self) {
        self.upstream_connections.fetch_add(1, Ordering::Relaxed);
    }

    pub fn upstream_error(&self) {
        self.upstream_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("# HELP machined_edge_connections_total TLS connections accepted\n");
        s.push_str("# TYPE machined_edge_connections_total counter\n");
        s.push_str(&format!(
            "machined_edge_connections_total {}\n",
            self.accepted.load(Ordering::Relaxed)
        ));
        s.push_str("# HELP machined_edge_connections_open Client connections open now\n");
        s.push_str("# TYPE machined_edge_connections_open gauge\n");
        s.push_str(&format!(
            "machined_edge_connections_open {}\n",
            self.open.load(Ordering::Relaxed)
        ));
        s.push_str("# HELP machined_edge_tls_refused_total TLS handshakes refused\n");
        s.push_str("# TYPE machined_edge_tls_refused_total counter\n");
        let refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        let total: u64 = refused.values().sum();
        s.push_str(&format!("machined_edge_tls_refused_total {total}\n"));
        s.push_str(
            "# HELP machined_edge_tls_refused_by_reason_total TLS handshakes refused, by reason\n",
        );
        s.push_str("# TYPE machined_edge_tls_refused_by_reason_total counter\n");
        for (reason, n) in refused.iter() {
            s.push_str(&format!(
                "machined_edge_tls_refused_by_reason_total{{reason=\"{reason}\"}} {n}\n"
            ));
        }
        drop(refused);
        s.push_str("# HELP machined_edge_refused_total Handshakes, connections and requests refused by a budget, by reason\n");
        s.push_str("# TYPE machined_edge_refused_total counter\n");
        let over = self.over_budget.lock().unwrap_or_else(|p| p.into_inner());
        for (reason, n) in over.iter() {
            s.push_str(&format!(
                "machined_edge_refused_total{{reason=\"{reason}\"}} {n}\n"
            ));
        }
        drop(over);
        for (name, help, value) in self.gauges.get().map(|g| g()).unwrap_or_default() {
            s.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            ));
        }
        s.push_str("# HELP machined_edge_upstream_errors_total Requests machined did not take\n");
        s.push_str("# TYPE machined_edge_upstream_errors_total counter\n");
        s.push_str(&format!(
            "machined_edge_upstream_errors_total {}\n",
            self.upstream_errors.load(Ordering::Relaxed)
        ));
        s.push_str(
            "# HELP machined_edge_upstream_connections_total Connections opened to machined\n",
        );
        s.push_str("# TYPE machined_edge_upstream_connections_total counter\n");
        s.push_str(&format!(
            "machined_edge_upstream_connections_total {}\n",
            self.upstream_connections.load(Ordering::Relaxed)
        ));
        s.push_str(&self.watch.render());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts() {
        let m = Metrics::default();
        m.accepted();
        m.accepted();
        m.closed();
        m.refused("unknown_ca");
        m.refused("unknown_ca");
        m.refused("expired");
        m.over_budget("stream_client_budget");
        m.set_gauges(Box::new(|| {
            vec![("machined_edge_streams_open", "Requests in flight", 3)]
        }));
        let t = m.render();
        assert!(
            t.contains("\nmachined_edge_refused_total{reason=\"stream_client_budget\"} 1\n"),
            "{t}"
        );
        assert!(t.contains("\nmachined_edge_streams_open 3\n"), "{t}");
        assert!(t.contains("\nmachined_edge_connections_total 2\n"), "{t}");
        assert!(t.contains("\nmachined_edge_connections_open 1\n"), "{t}");
        assert!(t.contains("\nmachined_edge_tls_refused_total 3\n"), "{t}");
        assert!(t.contains("{reason=\"unknown_ca\"} 2\n"), "{t}");
    }

    /// One prefix per process (machined's own are `machined_*`, the edge's
    /// `machined_edge_*`), and every counter ends in `_total`.
    #[test]
    fn one_prefix_and_counters_end_in_total() {
        let m = Metrics::default();
        m.refused("unknown_ca");
        m.over_budget("handshake_budget");
        m.set_gauges(Box::new(|| {
            vec![("machined_edge_streams_open", "Requests in flight", 0)]
        }));
        let t = m.render();
        let mut families = 0;
        for line in t.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
                assert!(name.starts_with("machined_edge_"), "{name}");
                if kind == "counter" {
                    assert!(name.ends_with("_total"), "{name} is a counter");
                }
                families += 1;
            } else if !line.starts_with('#') {
                assert!(line.starts_with("machined_edge_"), "{line}");
            }
        }
        assert!(families >= 10, "{t}");
    }
}
