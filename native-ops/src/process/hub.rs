//! The meeting point between the reaper thread, the output pump thread and
//! TypeScript: a queue of exits and output chunks behind one mutex, with a
//! condvar TypeScript long-polls on ([`Hub::wait_events`]) and a second one
//! the reaper sleeps on while the process has no children.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How a reaped process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub pid: i32,
    /// Exit status when it exited normally.
    pub code: Option<i32>,
    /// Signal number when a signal killed it.
    pub signal: Option<i32>,
    pub core_dumped: bool,
}

/// Bytes read from one pipe, or its end (`eof`, with no data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub pipe: u32,
    pub data: Vec<u8>,
    pub eof: bool,
}

#[derive(Default)]
struct State {
    exits: VecDeque<Exit>,
    chunks: VecDeque<Chunk>,
    /// Children whose spawn failed before exec: their exit is not news.
    ignored: HashSet<i32>,
    /// Bumped on each spawn; the reaper sleeps on ECHILD until it changes.
    generation: u64,
    woken: bool,
    /// Bytes queued per pipe and not yet taken by TypeScript (backpressure).
    pending: HashMap<u32, usize>,
}

/// Shared state; one per process ([`Hub::global`]).
pub struct Hub {
    state: Mutex<State>,
    events: Condvar,
    children: Condvar,
}

/// Bytes a pipe may have queued before the pump stops reading it; the child
/// then blocks on write, which is the backpressure we want.
pub const PIPE_PENDING_CAP: usize = 1 << 20;

impl Hub {
    fn new() -> Self {
        Self {
            state: Mutex::default(),
            events: Condvar::new(),
            children: Condvar::new(),
        }
    }

    /// The process-wide hub.
    pub fn global() -> &'static Hub {
        static HUB: OnceLock<Hub> = OnceLock::new();
        HUB.get_or_init(Hub::new)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked mid-update; the queues
        // stay structurally valid, and PID 1 must keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue an exit unless it belongs to a failed spawn.
    pub fn push_exit(&self, exit: Exit) {
        let mut s = self.lock();
        if s.ignored.remove(&exit.pid) {
            return;
        }
        s.exits.push_back(exit);
        self.events.notify_all();
    }

    /// A spawn failed before exec: swallow that child's exit, whether the
    /// reaper already queued it or will later.
    pub fn ignore_exit(&self, pid: i32) {
        let mut s = self.lock();
        let before = s.exits.len();
        s.exits.retain(|e| e.pid != pid);
        if s.exits.len() == before {
            s.ignored.insert(pid);
        }
    }

    /// Queue output from the pump.
    pub fn push_chunk(&self, chunk: Chunk) {
        let mut s = self.lock();
        *s.pending.entry(chunk.pipe).or_default() += chunk.data.len();
        if chunk.eof {
            s.pending.remove(&chunk.pipe);
        }
        s.chunks.push_back(chunk);
        self.events.notify_all();
    }

    /// Whether the pump may read more from `pipe` now.
    pub fn pipe_has_room(&self, pipe: u32) -> bool {
        self.lock().pending.get(&pipe).copied().unwrap_or(0) < PIPE_PENDING_CAP
    }

    /// The spawn generation, read by the reaper before it waits.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// A child was forked: wake the reaper if it was idle.
    pub fn child_spawned(&self) {
        let mut s = self.lock();
        s.generation += 1;
        self.children.notify_all();
    }

    /// Sleep until a spawn happens after `seen` (or `limit` elapses, when given).
    pub fn wait_for_children(&self, seen: u64, limit: Option<Duration>) {
        let mut s = self.lock();
        let deadline = limit.map(|l| Instant::now() + l);
        while s.generation == seen {
            match deadline {
                None => s = self.children.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return;
                    }
                    s = self
                        .children
                        .wait_timeout(s, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }

    /// Wait up to `timeout` for exits or output, then take what is queued
    /// (output up to about `max_bytes`). Returns early on [`Hub::wake`].
    /// The bool says whether a throttled pipe may now have room.
    pub fn wait_events(
        &self,
        timeout: Duration,
        max_bytes: usize,
    ) -> (Vec<Exit>, Vec<Chunk>, bool) {
        let deadline = Instant::now() + timeout;
        let mut s = self.lock();
        while s.exits.is_empty() && s.chunks.is_empty() && !s.woken {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            s = self
                .events
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        s.woken = false;
        let exits: Vec<Exit> = s.exits.drain(..).collect();
        let mut chunks = Vec::new();
        let mut bytes = 0;
        let mut freed = false;
        while let Some(c) = s.chunks.front() {
            if bytes > 0 && bytes + c.data.len() > max_bytes {
                break;
            }
            let Some(c) = s.chunks.pop_front() else { break };
            bytes += c.data.len();
            if let Some(p) = s.pending.get_mut(&c.pipe) {
                freed |= *p >= PIPE_PENDING_CAP;
                *p = p.saturating_sub(c.data.len());
            }
            chunks.push(c);
        }
        (exits, chunks, freed)
    }

    /// Make a pending [`Hub::wait_events`] return now (used on shutdown).
    pub fn wake(&self) {
        self.lock().woken = true;
        self.events.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(pid: i32) -> Exit {
        Exit {
            pid,
            code: Some(0),
            signal: None,
            core_dumped: false,
        }
    }

    #[test]
    fn ignored_exit_is_swallowed_either_order() {
        let hub = Hub::new();
        hub.push_exit(exit(10));
        hub.ignore_exit(10);
        hub.ignore_exit(11);
        hub.push_exit(exit(11));
        hub.push_exit(exit(12));
        let (exits, _, _) = hub.wait_events(Duration::from_millis(1), 1024);
        assert_eq!(exits, vec![exit(12)]);
    }

    #[test]
    fn wait_times_out_empty_and_wakes() {
        let hub = Hub::new();
        let (e, c, _) = hub.wait_events(Duration::from_millis(5), 1024);
        assert!(e.is_empty() && c.is_empty());
        hub.wake();
        let start = Instant::now();
        hub.wait_events(Duration::from_secs(5), 1024);
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn output_is_batched_and_backpressure_released() {
        let hub = Hub::new();
        hub.push_chunk(Chunk {
            pipe: 1,
            data: vec![0; PIPE_PENDING_CAP],
            eof: false,
        });
        hub.push_chunk(Chunk {
            pipe: 1,
            data: vec![1; 10],
            eof: false,
        });
        assert!(!hub.pipe_has_room(1));
        let (_, chunks, freed) = hub.wait_events(Duration::from_millis(1), 100);
        assert_eq!(chunks.len(), 1);
        assert!(freed);
        assert!(hub.pipe_has_room(1));
    }

    #[test]
    fn reaper_wakes_on_spawn() {
        let hub = Hub::new();
        let seen = hub.generation();
        hub.child_spawned();
        hub.wait_for_children(seen, None); // returns at once: generation moved
        hub.wait_for_children(hub.generation(), Some(Duration::from_millis(5)));
    }
}
