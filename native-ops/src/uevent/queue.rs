//! The bounded hand-over between the receive thread and TypeScript. The thread
//! delivers; `take` waits for a batch. Past `capacity` queued events, newer
//! ones are dropped and counted, and the next batch says `resync`: the reader
//! must re-list, since it cannot know what it missed. Memory stays bounded
//! whatever the kernel sends and however slowly TypeScript reads.

use super::parse::Uevent;
use crate::error::SysErr;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Counters over a stream's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Kernel uevents queued.
    pub received: u64,
    /// Dropped because the queue was full (or the socket overflowed: ENOBUFS).
    pub dropped: u64,
    /// Kernel datagrams the parser refused.
    pub rejected: u64,
    /// Datagrams from a sender other than the kernel (ignored).
    pub foreign: u64,
}

/// One batch for the reader.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Batch {
    pub events: Vec<Uevent>,
    /// Events dropped since the previous batch.
    pub dropped: u64,
    /// Something was lost since the previous batch: re-list everything.
    pub resync: bool,
}

/// What a `take` produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Take {
    Batch(Batch),
    TimedOut,
    Closed,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Uevent>,
    dropped: u64,
    resync: bool,
    closed: bool,
    error: Option<SysErr>,
    counters: Counters,
}

/// A bounded queue of uevents with a lost-events flag.
pub struct Queue {
    capacity: usize,
    state: Mutex<State>,
    ready: Condvar,
}

/// What the receive thread saw in one datagram.
pub enum Delivery {
    Event(Box<Uevent>),
    /// The kernel dropped datagrams (ENOBUFS on the socket).
    Overrun,
    /// A kernel datagram the parser refused: treated as lost.
    Rejected,
    /// Not from the kernel.
    Foreign,
}

impl Queue {
    /// A queue holding at most `capacity` (at least 1) undelivered events.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked holding it; the
        // state is still a valid queue.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record what the receive thread saw, and wake a waiting reader.
    pub fn deliver(&self, d: Delivery) {
        let mut s = self.lock();
        match d {
            Delivery::Event(ev) if s.queue.len() < self.capacity => {
                s.queue.push_back(*ev);
                s.counters.received += 1;
            }
            Delivery::Event(_) | Delivery::Overrun => {
                s.dropped += 1;
                s.counters.dropped += 1;
                s.resync = true;
            }
            Delivery::Rejected => {
                s.counters.rejected += 1;
                s.resync = true;
            }
            Delivery::Foreign => {
                s.counters.foreign += 1;
                return;
            }
        }
        drop(s);
        self.ready.notify_all();
    }

    /// The receive thread failed for good: the next `take` returns the error.
    pub fn fail(&self, e: SysErr) {
        self.lock().error = Some(e);
        self.ready.notify_all();
    }

    /// Close: pending and later `take`s return `Closed`.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.queue.clear();
        drop(s);
        self.ready.notify_all();
    }

    /// Whether [`Queue::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// The counters so far.
    pub fn counters(&self) -> Counters {
        self.lock().counters
    }

    /// Wait up to `timeout` for events or a resync, and take them all.
    pub fn take(&self, timeout: Duration) -> Result<Take, SysErr> {
        let deadline = Instant::now() + timeout;
        let mut s = self.lock();
        loop {
            if s.closed {
                return Ok(Take::Closed);
            }
            if let Some(e) = s.error.take() {
                return Err(e);
            }
            if !s.queue.is_empty() || s.resync {
                let batch = Batch {
                    events: s.queue.drain(..).collect(),
                    dropped: std::mem::take(&mut s.dropped),
                    resync: std::mem::take(&mut s.resync),
                };
                return Ok(Take::Batch(batch));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Take::TimedOut);
            }
            s = self
                .ready
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn ev(n: u32) -> Uevent {
        let text = format!(
            "change@/devices/virtual/block/loop{n}\0ACTION=change\0\
             DEVPATH=/devices/virtual/block/loop{n}\0SUBSYSTEM=block\0"
        );
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn hands_over_in_order() {
        let q = Queue::new(4);
        q.deliver(Delivery::Event(Box::new(ev(0))));
        q.deliver(Delivery::Event(Box::new(ev(1))));
        let Take::Batch(b) = q.take(Duration::ZERO).unwrap() else {
            panic!()
        };
        assert_eq!(b.events, vec![ev(0), ev(1)]);
        assert_eq!((b.dropped, b.resync), (0, false));
        assert_eq!(q.take(Duration::from_millis(5)).unwrap(), Take::TimedOut);
    }

    #[test]
    fn a_flood_is_dropped_counted_and_asks_for_a_resync() {
        let q = Queue::new(3);
        for n in 0..10_000 {
            q.deliver(Delivery::Event(Box::new(ev(n))));
        }
        let Take::Batch(b) = q.take(Duration::ZERO).unwrap() else {
            panic!()
        };
        assert_eq!(b.events.len(), 3);
        assert_eq!((b.dropped, b.resync), (9_997, true));
        let c = q.counters();
        assert_eq!((c.received, c.dropped), (3, 9_997));
        // The flag is consumed: the next batch starts clean.
        q.deliver(Delivery::Event(Box::new(ev(1))));
        let Take::Batch(b) = q.take(Duration::ZERO).unwrap() else {
            panic!()
        };
        assert_eq!((b.events.len(), b.dropped, b.resync), (1, 0, false));
    }

    #[test]
    fn overrun_and_rejects_resync_foreign_does_not() {
        let q = Queue::new(3);
        q.deliver(Delivery::Foreign);
        assert_eq!(q.take(Duration::ZERO).unwrap(), Take::TimedOut);
        q.deliver(Delivery::Rejected);
        let Take::Batch(b) = q.take(Duration::ZERO).unwrap() else {
            panic!()
        };
        assert!(b.resync && b.events.is_empty());
        q.deliver(Delivery::Overrun);
        let Take::Batch(b) = q.take(Duration::ZERO).unwrap() else {
            panic!()
        };
        assert_eq!((b.dropped, b.resync), (1, true));
        let c = q.counters();
        assert_eq!((c.foreign, c.rejected, c.dropped), (1, 1, 1));
    }

    #[test]
    fn close_wakes_a_waiter_and_errors_surface() {
        let q = std::sync::Arc::new(Queue::new(3));
        let q2 = q.clone();
        let t = std::thread::spawn(move || q2.take(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        q.close();
        assert_eq!(t.join().unwrap().unwrap(), Take::Closed);
        let q = Queue::new(3);
        q.fail(SysErr::new("recv", libc::EIO, "uevent"));
        assert_eq!(q.take(Duration::ZERO).unwrap_err().errno, libc::EIO);
    }
}
