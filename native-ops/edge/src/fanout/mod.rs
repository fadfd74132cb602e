//! The Watch fan-out (`--watch-fanout=edge`, the default): every gRPC Watch
//! call machined's watch route would take is served here from one shared
//! upstream Watch per (request message, caller role), so machined serves one
//! stream per distinct watch however many clients watch it (docs/api.md,
//! "Watch"; docs/decisions.md, "Watch fan-out at the edge"). machined still
//! decides everything on the shared call (RBAC, redaction for the role, the
//! type and namespace, errors); the edge only keeps the snapshot and repeats
//! the stream. `--watch-fanout=machined` forwards Watch like any call.

mod request;
pub mod state;
mod stream;
mod upstream;
pub mod wire;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::identity::Identity;
use crate::metrics::Metrics;
use crate::options::Options;

pub use request::serve;

/// The edge's one hub, set at start when the fan-out is on. A process-wide
/// value so the request path reaches it without another field per connection.
static HUB: OnceLock<Arc<Hub>> = OnceLock::new();

/// Turns the fan-out on (main.rs, once).
pub fn install(options: &Options, metrics: Arc<Metrics>) {
    let _ = HUB.set(Arc::new(Hub::new(options, metrics)));
}

fn hub() -> Option<&'static Arc<Hub>> {
    HUB.get()
}

/// Which shared call a client reads: the request message and the role machined redacts for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    message: Bytes,
    role: &'static str,
}

/// One shared upstream Watch and its clients.
struct Share {
    key: Key,
    state: Mutex<state::ShareState>,
    task: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Share {
    fn lock(&self) -> std::sync::MutexGuard<'_, state::ShareState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The shares by key, and the upstream connection they use.
pub struct Hub {
    shares: Mutex<HashMap<Key, Arc<Share>>>,
    upstream: upstream::Connection,
    read_max_bytes: u64,
    metrics: Arc<Metrics>,
    /// Bytes held in all the shares' logs.
    budget: Arc<state::NodeBudget>,
}

impl Hub {
    fn new(o: &Options, metrics: Arc<Metrics>) -> Hub {
        Hub {
            shares: Mutex::new(HashMap::new()),
            upstream: upstream::Connection::new(
                PathBuf::from(&o.socket),
                o.max_header_bytes,
                o.write_max_bytes,
            ),
            read_max_bytes: o.read_max_bytes,
            metrics: metrics.clone(),
            budget: metrics
                .watch
                .budget
                .get_or_init(|| state::NodeBudget::new(state::NODE_LOG_BYTES))
                .clone(),
        }
    }

    /// Attaches a client to the share for `key`, opening it (and its upstream
    /// call, as `identity`) when there is none.
    fn join(self: &Arc<Self>, key: Key, identity: &Identity) -> (Arc<Share>, u64) {
        let mut shares = self.shares.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(share) = shares.get(&key) {
            let mut st = share.lock();
            if !st.closed && !st.ended() {
                let id = st.attach();
                drop(st);
                self.metrics.watch.clients.fetch_add(1, Ordering::Relaxed);
                return (share.clone(), id);
            }
        }
        let share = Arc::new(Share {
            key: key.clone(),
            state: Mutex::new(state::ShareState::with_budget(
                state::BOUNDS,
                self.budget.clone(),
            )),
            task: Mutex::new(None),
        });
        let id = share.lock().attach();
        let task = tokio::spawn(upstream::run(self.clone(), share.clone(), identity.clone()));
        *share.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task.abort_handle());
        // An ended share still in the map (its task has not said so yet) is replaced.
        if shares.insert(key, share.clone()).is_none() {
            self.metrics.watch.shares.fetch_add(1, Ordering::Relaxed);
        }
        self.metrics
            .watch
            .upstream_calls
            .fetch_add(1, Ordering::Relaxed);
        self.metrics.watch.clients.fetch_add(1, Ordering::Relaxed);
        (share, id)
    }

    /// A client left; the last one cancels the upstream call.
    fn leave(&self, share: &Arc<Share>, id: u64) {
        self.metrics.watch.clients.fetch_sub(1, Ordering::Relaxed);
        let mut shares = self.shares.lock().unwrap_or_else(|p| p.into_inner());
        let mut st = share.lock();
        if !st.detach(id) {
            return;
        }
        st.closed = true;
        drop(st);
        self.forget(&mut shares, share);
        if let Some(task) = share.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }

    /// The share's upstream call ended: new clients get a new one.
    fn ended(&self, share: &Arc<Share>) {
        let mut shares = self.shares.lock().unwrap_or_else(|p| p.into_inner());
        self.forget(&mut shares, share);
    }

    fn forget(&self, shares: &mut HashMap<Key, Arc<Share>>, share: &Arc<Share>) {
        if shares
            .get(&share.key)
            .is_some_and(|s| Arc::ptr_eq(s, share))
        {
            shares.remove(&share.key);
            self.metrics.watch.shares.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The fan-out's counters (metrics.rs renders them with the rest).
#[derive(Debug, Default)]
pub struct WatchMetrics {
    shares: AtomicI64,
    clients: AtomicI64,
    upstream_calls: AtomicU64,
    overflows: AtomicU64,
    /// The hub's log budget, once the fan-out is on.
    budget: OnceLock<Arc<state::NodeBudget>>,
}

impl WatchMetrics {
    /// Prometheus text exposition of the fan-out's counters.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let mut family = |name: &str, kind: &str, help: &str, value: String| {
            s.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        };
        family(
            "machined_edge_watch_shares",
            "gauge",
            "Shared upstream Watch calls open (one per request and role)",
            self.shares.load(Ordering::Relaxed).to_string(),
        );
        family(
            "machined_edge_watch_clients",
            "gauge",
            "Client Watch streams served from the shared calls",
            self.clients.load(Ordering::Relaxed).to_string(),
        );
        family(
            "machined_edge_watch_upstream_calls_total",
            "counter",
            "Shared upstream Watch calls opened",
            self.upstream_calls.load(Ordering::Relaxed).to_string(),
        );
        family(
            "machined_edge_watch_overflows_total",
            "counter",
            "Overflow markers sent to clients that fell behind",
            self.overflows.load(Ordering::Relaxed).to_string(),
        );
        if let Some(b) = self.budget.get() {
            family(
                "machined_edge_watch_log_bytes",
                "gauge",
                "Bytes of live Watch messages held for clients behind (all shares)",
                b.held().to_string(),
            );
        }
        s
    }
}
