//! Thin `#[napi]` wrappers over `uevent/`: the stream's thread is native; a
//! `next` waits for a batch on a blocking worker and resolves a Promise.

use crate::napi_netlink::blocking;
use crate::uevent::{parse, queue, stream};
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// One kernel uevent.
#[napi(object)]
pub struct Uevent {
    /// `add`, `remove`, `change`, `move`, `bind`, `unbind`, `online`, `offline`.
    pub action: String,
    /// The device under /sys, e.g. `/devices/virtual/block/loop0`.
    pub devpath: String,
    pub subsystem: String,
    pub devname: Option<String>,
    /// `disk` or `partition` for block devices.
    pub devtype: Option<String>,
    /// A network device's name.
    pub interface: Option<String>,
    pub ifindex: Option<u32>,
    pub seqnum: Option<i64>,
    pub major: Option<u32>,
    pub minor: Option<u32>,
    /// Every key of the message (at most 64).
    pub vars: HashMap<String, String>,
}

impl From<parse::Uevent> for Uevent {
    fn from(e: parse::Uevent) -> Self {
        Self {
            action: e.action,
            devpath: e.devpath,
            subsystem: e.subsystem,
            devname: e.devname,
            devtype: e.devtype,
            interface: e.interface,
            ifindex: e.ifindex,
            seqnum: e.seqnum.map(|s| s.min(i64::MAX as u64) as i64),
            major: e.major,
            minor: e.minor,
            vars: e.vars.into_iter().collect(),
        }
    }
}

/// A batch: the events queued since the last one, and whether any were lost.
#[napi(object)]
pub struct UeventBatch {
    pub events: Vec<Uevent>,
    /// Dropped since the previous batch (queue full or socket overrun).
    pub dropped: i64,
    /// Events were lost: re-list instead of trusting the events alone.
    pub resync: bool,
}

/// A stream's counters since it opened.
#[napi(object)]
pub struct UeventCounters {
    pub received: i64,
    pub dropped: i64,
    pub rejected: i64,
    pub foreign: i64,
}

fn count(n: u64) -> i64 {
    n.min(i64::MAX as u64) as i64
}

/// The kernel's uevents. `next` resolves with a batch, an empty batch on
/// timeout, or null once closed.
#[napi]
pub struct UeventStream {
    inner: Arc<stream::Stream>,
}

#[napi]
impl UeventStream {
    /// Wait up to `timeout_ms` for the next batch.
    #[napi]
    pub async fn next(&self, timeout_ms: u32) -> napi::Result<Option<UeventBatch>> {
        let q = self.inner.queue().clone();
        let t = Duration::from_millis(timeout_ms.into());
        match blocking(move || q.take(t)).await? {
            queue::Take::Batch(b) => Ok(Some(UeventBatch {
                events: b.events.into_iter().map(Into::into).collect(),
                dropped: count(b.dropped),
                resync: b.resync,
            })),
            queue::Take::TimedOut => Ok(Some(UeventBatch {
                events: vec![],
                dropped: 0,
                resync: false,
            })),
            queue::Take::Closed => Ok(None),
        }
    }

    /// Counters since the stream opened.
    #[napi]
    pub fn counters(&self) -> UeventCounters {
        let c = self.inner.queue().counters();
        UeventCounters {
            received: count(c.received),
            dropped: count(c.dropped),
            rejected: count(c.rejected),
            foreign: count(c.foreign),
        }
    }

    /// Stop the receive thread and wake pending waits.
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// Open a uevent stream holding at most `capacity` undelivered events.
#[napi]
pub fn uevent_subscribe(capacity: u32) -> napi::Result<UeventStream> {
    let cap = (capacity as usize).clamp(1, 65_536);
    Ok(UeventStream {
        inner: Arc::new(stream::Stream::open(cap)?),
    })
}
