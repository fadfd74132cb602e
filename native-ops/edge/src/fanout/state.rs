//! One shared Watch's state, with no I/O so it can be tested alone: the
//! snapshot kept from the upstream's events, the log of live events every
//! client reads at a position of its own (machined's watch hub, done again at
//! the edge: runtime/watch_hub.ts), and each client's phase. A client gets
//! the snapshot as `created` messages, `bootstrapped`, then the live log from
//! the position the snapshot was taken at, so nothing is missed or repeated.
//! Past its bound (frames or bytes behind) it owes an `overflow{dropped}`,
//! lets go of the log, and starts over from the snapshot when it next reads:
//! what machined gives a stream that falls behind (runtime/watch_stream.ts).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Waker;

use bytes::Bytes;
use http::HeaderValue;

use super::wire::{bootstrapped_frame, created_frame, overflow_frame, resource_key, watch_event};
use super::wire::{Event, WireError};

/// machined's WATCH_STREAM_CAPACITY: live events a stream may fall behind.
pub const CLIENT_CAPACITY_FRAMES: u64 = 4096;
/// Bytes of live events a client may fall behind (they are shared, this bounds the log).
pub const CLIENT_CAPACITY_BYTES: u64 = 4 * 1024 * 1024;
/// Bytes of live events held in all the logs together: with the node's stream
/// budget of forwarded streams (2048 × about 22 KiB measured) it stays inside
/// the edge's 64 MiB cgroup (docs/decisions.md, "The edge's budgets").
pub const NODE_LOG_BYTES: u64 = 12 * 1024 * 1024;

/// How a call ends: its `grpc-status` and `grpc-message` trailers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: u32,
    /// Already percent-encoded, as it goes on the wire.
    pub message: Option<HeaderValue>,
}

impl Status {
    pub fn new(code: u32, message: &str) -> Status {
        let encoded = crate::identity::encode_uri_component(message);
        Status {
            code,
            message: HeaderValue::from_str(&encoded).ok(),
        }
    }
}

/// What a client reads next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Frame(Bytes),
    /// Nothing yet: its waker is kept.
    Pending,
    End(Status),
}

/// The current contents: resource identity → its `created` message, in the
/// order the resources first appeared (the order the upstream listed them).
#[derive(Default)]
struct Snapshot {
    index: HashMap<Vec<u8>, u64>,
    entries: BTreeMap<u64, Bytes>,
    next: u64,
    cached: Option<Arc<[Bytes]>>,
}

impl Snapshot {
    fn put(&mut self, key: Vec<u8>, frame: Bytes) {
        let seq = *self.index.entry(key).or_insert_with(|| {
            self.next += 1;
            self.next
        });
        self.entries.insert(seq, frame);
        self.cached = None;
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some(seq) = self.index.remove(key) {
            self.entries.remove(&seq);
        }
        self.cached = None;
    }

    fn clear(&mut self) {
        *self = Snapshot::default();
    }

    /// The frames, shared by every client that bootstraps before the next change.
    fn frames(&mut self) -> Arc<[Bytes]> {
        self.cached
            .get_or_insert_with(|| self.entries.values().cloned().collect())
            .clone()
    }
}

struct Entry {
    frame: Bytes,
    /// Bytes appended up to and including this one.
    end: u64,
}

/// Bytes held in every share's log, against an edge-wide budget: past it, the
/// share whose append crossed it overflows its slowest clients until it is back
/// under (so the sum of the logs stays within the budget and one message).
#[derive(Debug)]
pub struct NodeBudget {
    held: AtomicU64,
    max: u64,
}

impl NodeBudget {
    pub fn new(max: u64) -> Arc<NodeBudget> {
        Arc::new(NodeBudget {
            held: AtomicU64::new(0),
            max,
        })
    }

    fn over(&self) -> bool {
        self.held.load(Ordering::Relaxed) > self.max
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }
}

/// Live events from sequence number `base` on.
struct Log {
    entries: VecDeque<Entry>,
    base: u64,
    total: u64,
    node: Arc<NodeBudget>,
}

impl Drop for Log {
    fn drop(&mut self) {
        let held: u64 = self.entries.iter().map(|e| e.frame.len() as u64).sum();
        self.node.held.fetch_sub(held, Ordering::Relaxed);
    }
}

impl Log {
    fn head(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    fn push(&mut self, frame: Bytes) {
        self.total += frame.len() as u64;
        self.node
            .held
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
        self.entries.push_back(Entry {
            frame,
            end: self.total,
        });
    }

    fn get(&self, seq: u64) -> Option<&Entry> {
        self.entries.get(seq.checked_sub(self.base)? as usize)
    }

    /// Bytes from `seq` to the head.
    fn bytes_from(&self, seq: u64) -> u64 {
        match self.get(seq) {
            Some(e) => self.total - (e.end - e.frame.len() as u64),
            None => 0,
        }
    }

    fn trim(&mut self, min: u64) {
        while self.base < min {
            let Some(e) = self.entries.pop_front() else {
                break;
            };
            self.node
                .held
                .fetch_sub(e.frame.len() as u64, Ordering::Relaxed);
            self.base += 1;
        }
    }
}

enum Phase {
    /// Waits for a snapshot: at first, after an overflow, while the upstream bootstraps.
    Waiting,
    Replay {
        frames: Arc<[Bytes]>,
        next: usize,
    },
    Live,
}

struct Client {
    phase: Phase,
    /// The next log entry it reads (Replay and Live).
    pos: u64,
    /// An overflow marker owed, with the events dropped so far.
    overflow: Option<u64>,
    waker: Option<Waker>,
}

/// The limits of each client's position behind the log's head.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub frames: u64,
    pub bytes: u64,
}

pub const BOUNDS: Bounds = Bounds {
    frames: CLIENT_CAPACITY_FRAMES,
    bytes: CLIENT_CAPACITY_BYTES,
};

/// See the module doc.
pub struct ShareState {
    snapshot: Snapshot,
    bootstrapped: bool,
    log: Log,
    clients: HashMap<u64, Client>,
    next_id: u64,
    ended: Option<Status>,
    bounds: Bounds,
    /// No client left: the share is being removed, nobody may attach.
    pub closed: bool,
}

impl ShareState {
    /// A share with no edge-wide budget (tests).
    #[cfg(test)]
    pub fn new(bounds: Bounds) -> ShareState {
        ShareState::with_budget(bounds, NodeBudget::new(u64::MAX))
    }

    pub fn with_budget(bounds: Bounds, node: Arc<NodeBudget>) -> ShareState {
        ShareState {
            snapshot: Snapshot::default(),
            bootstrapped: false,
            log: Log {
                entries: VecDeque::new(),
                base: 0,
                total: 0,
                node,
            },
            clients: HashMap::new(),
            next_id: 0,
            ended: None,
            bounds,
            closed: false,
        }
    }

    /// A new client; it gets the snapshot once the upstream has bootstrapped.
    pub fn attach(&mut self) -> u64 {
        self.next_id += 1;
        self.clients.insert(
            self.next_id,
            Client {
                phase: Phase::Waiting,
                pos: 0,
                overflow: None,
                waker: None,
            },
        );
        self.next_id
    }

    /// Removes a client; true when none is left.
    pub fn detach(&mut self, id: u64) -> bool {
        self.clients.remove(&id);
        self.clients.is_empty()
    }

    /// Live events held (for tests and leak checks).
    #[cfg(test)]
    pub fn retained(&self) -> usize {
        self.log.entries.len()
    }

    pub fn ended(&self) -> bool {
        self.ended.is_some()
    }

    /// The upstream ended (trailers, an error, machined gone): clients end after what they have.
    pub fn end(&mut self, status: Status, wake: &mut Vec<Waker>) {
        self.ended.get_or_insert(status);
        self.wake_all(wake);
    }

    /// One upstream message (prefix included). Wakers to wake are added to `wake`.
    pub fn upstream(&mut self, frame: Bytes, wake: &mut Vec<Waker>) -> Result<(), WireError> {
        let event = watch_event(&frame.slice(5.min(frame.len())..))?;
        let live = self.bootstrapped;
        match event {
            Event::Created(r) => self.snapshot.put(resource_key(&r)?, frame.clone()),
            Event::Updated(r) => self.snapshot.put(resource_key(&r)?, created_frame(&r)),
            Event::Destroyed(r) => self.snapshot.remove(&resource_key(&r)?),
            Event::Bootstrapped => {
                if !live {
                    self.bootstrapped = true;
                    self.wake_all(wake);
                }
                return Ok(());
            }
            Event::Overflow(dropped) => {
                self.upstream_overflow(dropped, wake);
                return Ok(());
            }
            Event::Other => {}
        }
        if live {
            self.append(frame, wake);
        }
        Ok(())
    }

    /// machined dropped events of the shared call: every client that had the
    /// old contents owes an overflow; all wait for the contents that follow.
    fn upstream_overflow(&mut self, dropped: u64, wake: &mut Vec<Waker>) {
        let head = self.log.head();
        for c in self.clients.values_mut() {
            if let Some(n) = c.overflow.as_mut() {
                *n += dropped;
            } else if !matches!(c.phase, Phase::Waiting) {
                c.overflow = Some(head - c.pos + dropped);
            }
        }
        self.bootstrapped = false;
        self.snapshot.clear();
        self.log.trim(head);
        self.wake_all(wake);
    }

    /// A live event: every client reads it, or overflows past its bound.
    fn append(&mut self, frame: Bytes, wake: &mut Vec<Waker>) {
        self.log.push(frame);
        let head = self.log.head();
        let mut min = head;
        for c in self.clients.values_mut() {
            if let Some(n) = c.overflow.as_mut() {
                *n += 1;
                continue;
            }
            if matches!(c.phase, Phase::Waiting) {
                continue;
            }
            let behind = head - c.pos;
            if behind > self.bounds.frames || self.log.bytes_from(c.pos) > self.bounds.bytes {
                c.overflow = Some(behind);
            } else {
                min = min.min(c.pos);
            }
            wake.extend(c.waker.take());
        }
        self.log.trim(min);
        while self.log.node.over() && self.shed_slowest(wake) {}
    }

    /// Overflows the clients furthest behind and lets go of what only they
    /// held; false when no client holds anything.
    fn shed_slowest(&mut self, wake: &mut Vec<Waker>) -> bool {
        let head = self.log.head();
        let holding = |c: &Client| c.overflow.is_none() && !matches!(c.phase, Phase::Waiting);
        let Some(slowest) = self
            .clients
            .values()
            .filter(|c| holding(c))
            .map(|c| c.pos)
            .min()
        else {
            return false;
        };
        if slowest >= head {
            return false;
        }
        for c in self.clients.values_mut() {
            if holding(c) && c.pos == slowest {
                c.overflow = Some(head - slowest);
                wake.extend(c.waker.take());
            }
        }
        let min = self
            .clients
            .values()
            .filter(|c| holding(c))
            .map(|c| c.pos)
            .min();
        self.log.trim(min.unwrap_or(head));
        true
    }

    fn wake_all(&mut self, wake: &mut Vec<Waker>) {
        wake.extend(self.clients.values_mut().filter_map(|c| c.waker.take()));
    }

    /// What client `id` reads next; keeps `waker` when there is nothing yet.
    pub fn next(&mut self, id: u64, waker: &Waker) -> Next {
        let head = self.log.head();
        let Some(c) = self.clients.get_mut(&id) else {
            return Next::End(Status::new(1, "detached"));
        };
        if let Some(dropped) = c.overflow.take() {
            c.phase = Phase::Waiting;
            return Next::Frame(overflow_frame(dropped));
        }
        if matches!(c.phase, Phase::Waiting) && self.bootstrapped && self.ended.is_none() {
            c.phase = Phase::Replay {
                frames: self.snapshot.frames(),
                next: 0,
            };
            c.pos = head;
        }
        match &mut c.phase {
            Phase::Replay { frames, next } => {
                let frame = match frames.get(*next) {
                    Some(f) => f.clone(),
                    None => {
                        c.phase = Phase::Live;
                        return Next::Frame(bootstrapped_frame());
                    }
                };
                *next += 1;
                return Next::Frame(frame);
            }
            Phase::Live => {
                if let Some(e) = self.log.get(c.pos) {
                    c.pos += 1;
                    return Next::Frame(e.frame.clone());
                }
            }
            _ => {}
        }
        if let Some(status) = &self.ended {
            return Next::End(status.clone());
        }
        c.waker = Some(waker.clone());
        Next::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::tests::resource;
    use super::*;
    use std::task::Wake;

    struct NoWake;
    impl Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }

    fn waker() -> Waker {
        Waker::from(Arc::new(NoWake))
    }

    fn created(id: &str, spec: &str) -> Bytes {
        created_frame(&resource("ns", "T", id, spec.as_bytes()))
    }

    fn updated(id: &str, spec: &str) -> Bytes {
        let r = resource("ns", "T", id, spec.as_bytes());
        let mut u = vec![0x0a, r.len() as u8];
        u.extend_from_slice(&r);
        let mut f = vec![0, 0, 0, 0, (u.len() + 2) as u8, 0x12, u.len() as u8];
        f.extend_from_slice(&u);
        Bytes::from(f)
    }

    fn destroyed(id: &str) -> Bytes {
        let c = created(id, "x");
        let mut f = c.to_vec();
        f[5] = 0x1a;
        Bytes::from(f)
    }

    fn feed(s: &mut ShareState, frames: &[Bytes]) {
        let mut w = Vec::new();
        for f in frames {
            s.upstream(f.clone(), &mut w).unwrap();
        }
    }

    /// Everything client `id` can read now.
    fn drain(s: &mut ShareState, id: u64) -> Vec<Bytes> {
        let mut out = Vec::new();
        while let Next::Frame(f) = s.next(id, &waker()) {
            out.push(f);
        }
        out
    }

    #[test]
    fn clients_wait_for_the_bootstrap_then_read_snapshot_and_live_events() {
        let mut s = ShareState::new(BOUNDS);
        let a = s.attach();
        feed(&mut s, &[created("1", "a"), created("2", "b")]);
        assert_eq!(s.next(a, &waker()), Next::Pending);
        feed(&mut s, &[bootstrapped_frame(), updated("1", "a2")]);
        let b = s.attach();
        // `a` bootstraps after the update: the update is in its snapshot, not repeated live.
        let got_a = drain(&mut s, a);
        assert_eq!(
            got_a,
            vec![created("1", "a2"), created("2", "b"), bootstrapped_frame()]
        );
        feed(&mut s, &[destroyed("2"), created("3", "c")]);
        assert_eq!(drain(&mut s, a), vec![destroyed("2"), created("3", "c")]);
        assert_eq!(
            drain(&mut s, b),
            vec![created("1", "a2"), created("3", "c"), bootstrapped_frame()]
        );
    }

    #[test]
    fn live_events_during_a_replay_follow_it_once() {
        let mut s = ShareState::new(BOUNDS);
        feed(&mut s, &[created("1", "a"), bootstrapped_frame()]);
        let a = s.attach();
        assert_eq!(s.next(a, &waker()), Next::Frame(created("1", "a")));
        feed(&mut s, &[updated("1", "b")]);
        assert_eq!(
            drain(&mut s, a),
            vec![bootstrapped_frame(), updated("1", "b")]
        );
        assert_eq!(s.next(a, &waker()), Next::Pending);
    }

    #[test]
    fn a_slow_client_overflows_alone_then_gets_the_contents_again() {
        let bounds = Bounds {
            frames: 3,
            bytes: 1 << 20,
        };
        let mut s = ShareState::new(bounds);
        feed(&mut s, &[created("1", "v0"), bootstrapped_frame()]);
        let slow = s.attach();
        let fast = s.attach();
        assert_eq!(drain(&mut s, slow).len(), 2);
        assert_eq!(drain(&mut s, fast).len(), 2);
        for i in 1..=5 {
            feed(&mut s, &[updated("1", &format!("v{i}"))]);
            assert_eq!(drain(&mut s, fast), vec![updated("1", &format!("v{i}"))]);
        }
        // 4 behind (> 3) overflowed it, then one more was dropped: machined's count.
        assert_eq!(
            drain(&mut s, slow),
            vec![overflow_frame(5), created("1", "v5"), bootstrapped_frame()]
        );
        // The log holds nothing for the slow client, only what the fast one read
        // last (trimmed at the next append).
        assert_eq!(s.retained(), 1);
        feed(&mut s, &[updated("1", "v6")]);
        assert_eq!(drain(&mut s, slow), vec![updated("1", "v6")]);
        assert_eq!(drain(&mut s, fast), vec![updated("1", "v6")]);
    }

    #[test]
    fn the_byte_bound_overflows_too() {
        let big = "x".repeat(100);
        let bounds = Bounds {
            frames: 1000,
            bytes: 2 * updated("1", &big).len() as u64,
        };
        let mut s = ShareState::new(bounds);
        feed(&mut s, &[bootstrapped_frame()]);
        let c = s.attach();
        assert_eq!(drain(&mut s, c), vec![bootstrapped_frame()]);
        feed(&mut s, &[updated("1", &big), updated("1", &big)]);
        assert_eq!(s.retained(), 2);
        feed(&mut s, &[updated("1", &big)]);
        assert_eq!(s.retained(), 0, "the overflowed client let go of the log");
        assert_eq!(drain(&mut s, c)[0], overflow_frame(3));
    }

    #[test]
    fn the_edge_wide_budget_overflows_the_slowest_clients_of_the_share_that_crosses_it() {
        let f = updated("1", &"x".repeat(100));
        let node = NodeBudget::new(3 * f.len() as u64);
        let mut a = ShareState::with_budget(BOUNDS, node.clone());
        let mut b = ShareState::with_budget(BOUNDS, node.clone());
        let (ca, cb) = (a.attach(), b.attach());
        for (s, c) in [(&mut a, ca), (&mut b, cb)] {
            feed(s, &[bootstrapped_frame()]);
            assert_eq!(drain(s, c), vec![bootstrapped_frame()]);
        }
        let fast = b.attach();
        drain(&mut b, fast);
        feed(&mut a, &[f.clone(), f.clone()]);
        assert_eq!(node.held(), 2 * f.len() as u64);
        feed(&mut b, std::slice::from_ref(&f));
        assert_eq!(drain(&mut b, fast), vec![f.clone()]);
        feed(&mut b, std::slice::from_ref(&f));
        // Four held, three allowed: b's slowest client (two behind) overflows; the fast one reads on.
        assert_eq!(drain(&mut b, cb)[0], overflow_frame(2));
        assert_eq!(drain(&mut b, fast), vec![f.clone()]);
        assert!(node.held() <= 3 * f.len() as u64);
        drop(a);
        drop(b);
        assert_eq!(node.held(), 0, "a share gone gives its bytes back");
    }

    #[test]
    fn an_upstream_overflow_restarts_every_client_from_the_new_contents() {
        let mut s = ShareState::new(BOUNDS);
        feed(&mut s, &[created("1", "a"), bootstrapped_frame()]);
        let c = s.attach();
        drain(&mut s, c);
        feed(&mut s, &[updated("1", "b")]);
        feed(&mut s, &[overflow_frame(10)]);
        // One unread, ten dropped by machined; the new contents are not there yet.
        assert_eq!(drain(&mut s, c), vec![overflow_frame(11)]);
        feed(&mut s, &[created("2", "z")]);
        assert_eq!(s.next(c, &waker()), Next::Pending);
        feed(&mut s, &[bootstrapped_frame()]);
        assert_eq!(
            drain(&mut s, c),
            vec![created("2", "z"), bootstrapped_frame()]
        );
    }

    #[test]
    fn an_end_reaches_every_client_after_what_it_has() {
        let mut s = ShareState::new(BOUNDS);
        let early = s.attach();
        feed(&mut s, &[bootstrapped_frame()]);
        assert_eq!(drain(&mut s, early), vec![bootstrapped_frame()]);
        feed(&mut s, &[created("1", "a")]);
        let late = s.attach();
        let mut w = Vec::new();
        s.end(Status::new(14, "gone"), &mut w);
        assert_eq!(drain(&mut s, early), vec![created("1", "a")]);
        assert_eq!(s.next(early, &waker()), Next::End(Status::new(14, "gone")));
        // No snapshot for a client that had none when the call ended: just the status.
        assert_eq!(s.next(late, &waker()), Next::End(Status::new(14, "gone")));
        let mut fresh = ShareState::new(BOUNDS);
        let c = fresh.attach();
        fresh.end(Status::new(5, "unknown type"), &mut w);
        assert_eq!(
            fresh.next(c, &waker()),
            Next::End(Status::new(5, "unknown type"))
        );
        assert!(fresh.detach(c));
    }

    #[test]
    fn malformed_upstream_messages_are_errors() {
        let mut s = ShareState::new(BOUNDS);
        let mut w = Vec::new();
        assert!(s
            .upstream(Bytes::from_static(&[0, 0, 0, 0, 2, 0x0a, 5]), &mut w)
            .is_err());
        assert!(s.upstream(Bytes::from_static(&[0, 0]), &mut w).is_ok());
    }

    #[test]
    fn waiting_clients_are_woken_by_the_bootstrap() {
        use std::sync::atomic::{AtomicBool, Ordering};
        struct Flag(AtomicBool);
        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let mut s = ShareState::new(BOUNDS);
        let c = s.attach();
        assert_eq!(s.next(c, &Waker::from(flag.clone())), Next::Pending);
        let mut w = Vec::new();
        s.upstream(bootstrapped_frame(), &mut w).unwrap();
        w.into_iter().for_each(Waker::wake);
        assert!(flag.0.load(Ordering::SeqCst));
    }
}
