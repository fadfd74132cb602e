//! The handshake budget: TLS handshakes in progress, overall and per source.
//! A newcomer is always admitted; over budget it evicts the oldest pending
//! handshake of its own source (per-source limit) or of the source that holds
//! the most (overall limit). So a client that completes its handshake in a
//! few round trips always gets its turn, and handshakes that never complete
//! only ever push out each other: they cannot lock anyone out, nor grow the
//! edge past the budget.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::budget::Source;

/// Why a pending handshake was closed to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evicted {
    /// Its source had `--max-handshakes-per-source` pending.
    Source,
    /// The node had `--max-handshakes` pending; its source held the most.
    Overall,
}

impl Evicted {
    /// The metrics label (`machined_edge_refused_total{reason}`).
    pub fn reason(self) -> &'static str {
        match self {
            Evicted::Source => "handshake_source_budget",
            Evicted::Overall => "handshake_budget",
        }
    }
}

struct Pending {
    id: u64,
    evict: oneshot::Sender<Evicted>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    total: usize,
    /// Per source, oldest first.
    by_source: HashMap<Source, VecDeque<Pending>>,
}

/// Every handshake in progress.
pub struct Handshakes {
    overall: usize,
    per_source: usize,
    state: Mutex<State>,
}

/// A handshake in progress; leaves the budget when dropped.
pub struct HandshakeSlot {
    owner: Arc<Handshakes>,
    source: Source,
    id: u64,
    evicted: oneshot::Receiver<Evicted>,
}

impl HandshakeSlot {
    /// Resolves when another handshake evicted this one.
    pub async fn evicted(&mut self) -> Evicted {
        match (&mut self.evicted).await {
            Ok(why) => why,
            // The registry never drops a sender without sending, except with the slot itself.
            Err(_) => std::future::pending().await,
        }
    }
}

/// The source to evict from for a newcomer from `source`, and why, or None
/// when there is room. Over the overall limit: the source holding the most,
/// and among those the one whose oldest handshake is oldest.
fn victim(
    state: &State,
    source: Source,
    overall: usize,
    per_source: usize,
) -> Option<(Source, Evicted)> {
    let own = state.by_source.get(&source).map_or(0, |q| q.len());
    if own >= per_source {
        return Some((source, Evicted::Source));
    }
    if state.total < overall {
        return None;
    }
    state
        .by_source
        .iter()
        .filter_map(|(s, q)| q.front().map(|p| (s, q.len(), p.id)))
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
        .map(|(s, _, _)| (*s, Evicted::Overall))
}

impl Handshakes {
    pub fn new(overall: usize, per_source: usize) -> Arc<Handshakes> {
        Arc::new(Handshakes {
            overall: overall.max(1),
            per_source: per_source.max(1),
            state: Mutex::new(State::default()),
        })
    }

    /// Admits a handshake from `source`, evicting what the budget says;
    /// returns its slot and the eviction made, if any.
    pub fn admit(self: &Arc<Self>, source: Source) -> (HandshakeSlot, Option<Evicted>) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut made = None;
        while let Some((from, why)) = victim(&st, source, self.overall, self.per_source) {
            let q = st.by_source.get_mut(&from).expect("victim has a queue");
            let oldest = q.pop_front().expect("victim queue is not empty");
            if q.is_empty() {
                st.by_source.remove(&from);
            }
            st.total -= 1;
            let _ = oldest.evict.send(why);
            made = Some(why);
        }
        let (tx, rx) = oneshot::channel();
        let id = st.next_id;
        st.next_id += 1;
        st.total += 1;
        st.by_source
            .entry(source)
            .or_default()
            .push_back(Pending { id, evict: tx });
        let slot = HandshakeSlot {
            owner: self.clone(),
            source,
            id,
            evicted: rx,
        };
        (slot, made)
    }

    /// Handshakes pending now.
    pub fn pending(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        let mut st = self.owner.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(q) = st.by_source.get_mut(&self.source) else {
            return;
        };
        let Some(at) = q.iter().position(|p| p.id == self.id) else {
            return; // evicted already, and counted out then
        };
        q.remove(at);
        if q.is_empty() {
            st.by_source.remove(&self.source);
        }
        st.total -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(s: &str) -> Source {
        Source::of(s.parse().unwrap())
    }

    fn fired(slot: &mut HandshakeSlot) -> Option<Evicted> {
        slot.evicted.try_recv().ok()
    }

    #[test]
    fn per_source_limit_evicts_the_oldest_of_the_same_source() {
        let h = Handshakes::new(100, 2);
        let (mut a1, _) = h.admit(src("10.0.0.1"));
        let (mut a2, _) = h.admit(src("10.0.0.1"));
        let (mut b1, _) = h.admit(src("10.0.0.2"));
        let (mut a3, why) = h.admit(src("10.0.0.1"));
        assert_eq!(why, Some(Evicted::Source));
        assert_eq!(fired(&mut a1), Some(Evicted::Source));
        assert_eq!(
            (fired(&mut a2), fired(&mut b1), fired(&mut a3)),
            (None, None, None)
        );
        assert_eq!(h.pending(), 3);
        drop(a1); // evicted: already counted out
        assert_eq!(h.pending(), 3);
        drop(a2);
        assert_eq!(h.pending(), 2);
        drop((b1, a3));
        assert_eq!(h.pending(), 0);
        assert!(h.state.lock().unwrap().by_source.is_empty());
    }

    #[test]
    fn overall_limit_evicts_the_oldest_of_the_source_holding_the_most() {
        let h = Handshakes::new(4, 10);
        let (mut b1, _) = h.admit(src("10.0.0.2"));
        let (mut a1, _) = h.admit(src("2001:db8::1"));
        let (mut a2, _) = h.admit(src("2001:db8::2")); // the same /64
        let (mut c1, _) = h.admit(src("10.0.0.3"));
        let (mut newcomer, why) = h.admit(src("10.0.0.9"));
        assert_eq!(why, Some(Evicted::Overall));
        assert_eq!(fired(&mut a1), Some(Evicted::Overall));
        for s in [&mut b1, &mut a2, &mut c1, &mut newcomer] {
            assert_eq!(fired(s), None);
        }
        // Now every source holds one: the oldest of them all (b1) goes next.
        let (_d, why) = h.admit(src("10.0.0.10"));
        assert_eq!(why, Some(Evicted::Overall));
        assert_eq!(fired(&mut b1), Some(Evicted::Overall));
        assert_eq!(h.pending(), 4);
    }

    #[test]
    fn victim_is_none_with_room() {
        let h = Handshakes::new(2, 2);
        let (_a, why) = h.admit(src("10.0.0.1"));
        assert_eq!(why, None);
        let st = h.state.lock().unwrap();
        assert_eq!(victim(&st, src("10.0.0.2"), 2, 2), None);
        assert_eq!(
            victim(&st, src("10.0.0.1"), 2, 1),
            Some((src("10.0.0.1"), Evicted::Source))
        );
        assert_eq!(
            victim(&st, src("10.0.0.2"), 1, 2),
            Some((src("10.0.0.1"), Evicted::Overall))
        );
    }
}
