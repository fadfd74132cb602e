//! Kernel clocks: clock_gettime/clock_settime on REALTIME, MONOTONIC and
//! BOOTTIME, and adjtimex(2) to read the NTP discipline state, slew by an
//! offset (PLL with ADJ_NANO, or the one-shot adjtime-style slew) and set status.

use crate::error::{SysErr, SysResult};
use crate::util::check;

/// Parse the TypeScript clock name.
pub fn clock_id(name: &str) -> SysResult<libc::clockid_t> {
    Ok(match name {
        "realtime" => libc::CLOCK_REALTIME,
        "monotonic" => libc::CLOCK_MONOTONIC,
        "boottime" => libc::CLOCK_BOOTTIME,
        other => {
            return Err(SysErr::new(
                "clock_gettime",
                libc::EINVAL,
                format!("unknown clock {other:?}"),
            ))
        }
    })
}

/// clock_gettime(2) as (seconds, nanoseconds).
pub fn get_time(clock: libc::clockid_t) -> SysResult<(i64, u32)> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writable timespec.
    check("clock_gettime", &clock.to_string(), unsafe {
        libc::clock_gettime(clock, &mut ts)
    })?;
    Ok((ts.tv_sec, ts.tv_nsec as u32))
}

/// clock_settime(2). Only CLOCK_REALTIME is settable.
pub fn set_time(clock: libc::clockid_t, sec: i64, nsec: u32) -> SysResult<()> {
    if nsec >= 1_000_000_000 {
        return Err(SysErr::new(
            "clock_settime",
            libc::EINVAL,
            format!("nsec {nsec}"),
        ));
    }
    let ts = libc::timespec {
        tv_sec: sec,
        tv_nsec: nsec.into(),
    };
    // SAFETY: valid timespec.
    let ret = unsafe { libc::clock_settime(clock, &ts) };
    check("clock_settime", &format!("{sec}.{nsec:09}"), ret).map(|_| ())
}

/// What an adjtimex(2) call should change; all `None` reads the state only.
#[derive(Debug, Default, Clone)]
pub struct Adjust {
    /// PLL offset in nanoseconds (ADJ_OFFSET | ADJ_NANO); the kernel slews it out.
    pub offset_ns: Option<i64>,
    /// One-shot slew in microseconds (ADJ_OFFSET_SINGLESHOT, as adjtime(3)).
    pub singleshot_us: Option<i64>,
    /// Frequency offset in scaled ppm (ppm << 16).
    pub frequency: Option<i64>,
    pub max_error_us: Option<i64>,
    pub est_error_us: Option<i64>,
    /// The whole status word (STA_*), e.g. STA_PLL to enable the PLL, or 0 to
    /// clear STA_UNSYNC.
    pub status: Option<i32>,
    pub time_constant: Option<i64>,
    pub tick: Option<i64>,
}

/// The kernel's NTP state after the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimexState {
    /// Return value: TIME_OK (0), TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT, TIME_ERROR (5).
    pub state: i32,
    pub offset: i64,
    pub frequency: i64,
    pub max_error_us: i64,
    pub est_error_us: i64,
    pub status: i32,
    pub time_constant: i64,
    pub precision_us: i64,
    pub tolerance: i64,
    pub time_sec: i64,
    /// Microseconds, or nanoseconds when `status` has STA_NANO.
    pub time_frac: i64,
    pub tick: i64,
    pub tai: i32,
}

/// adjtimex(2): apply `adj` (nothing when empty) and return the resulting state.
pub fn adjtimex(adj: &Adjust) -> SysResult<TimexState> {
    if adj.offset_ns.is_some() && adj.singleshot_us.is_some() {
        return Err(SysErr::new(
            "adjtimex",
            libc::EINVAL,
            "offset and singleshot are exclusive",
        ));
    }
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    let mut modes: libc::c_uint = 0;
    if let Some(ns) = adj.offset_ns {
        modes |= libc::ADJ_OFFSET | libc::ADJ_NANO;
        tx.offset = ns;
    }
    if let Some(us) = adj.singleshot_us {
        modes |= libc::ADJ_OFFSET_SINGLESHOT;
        tx.offset = us;
    }
    if let Some(f) = adj.frequency {
        modes |= libc::ADJ_FREQUENCY;
        tx.freq = f;
    }
    if let Some(v) = adj.max_error_us {
        modes |= libc::ADJ_MAXERROR;
        tx.maxerror = v;
    }
    if let Some(v) = adj.est_error_us {
        modes |= libc::ADJ_ESTERROR;
        tx.esterror = v;
    }
    if let Some(s) = adj.status {
        modes |= libc::ADJ_STATUS;
        tx.status = s;
    }
    if let Some(c) = adj.time_constant {
        modes |= libc::ADJ_TIMECONST;
        tx.constant = c;
    }
    if let Some(t) = adj.tick {
        modes |= libc::ADJ_TICK;
        tx.tick = t;
    }
    tx.modes = modes;
    // SAFETY: writable, zero-initialised timex.
    let state = unsafe { libc::adjtimex(&mut tx) };
    check("adjtimex", &format!("modes=0x{modes:x}"), state)?;
    Ok(TimexState {
        state,
        offset: tx.offset,
        frequency: tx.freq,
        max_error_us: tx.maxerror,
        est_error_us: tx.esterror,
        status: tx.status,
        time_constant: tx.constant,
        precision_us: tx.precision,
        tolerance: tx.tolerance,
        time_sec: tx.time.tv_sec,
        time_frac: tx.time.tv_usec,
        tick: tx.tick,
        tai: tx.tai,
    })
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// A clock reading: whole seconds and nanoseconds.
    #[napi(object)]
    pub struct Timespec {
        pub sec: i64,
        pub nsec: u32,
    }

    /// Fields to change with adjtimex(2); omit all to read only.
    #[napi(object)]
    pub struct AdjtimexRequest {
        pub offset_ns: Option<i64>,
        pub singleshot_us: Option<i64>,
        pub frequency: Option<i64>,
        pub max_error_us: Option<i64>,
        pub est_error_us: Option<i64>,
        pub status: Option<i32>,
        pub time_constant: Option<i64>,
        pub tick: Option<i64>,
    }

    /// The kernel NTP state adjtimex(2) reports.
    #[napi(object)]
    pub struct AdjtimexState {
        pub state: i32,
        pub offset: i64,
        pub frequency: i64,
        pub max_error_us: i64,
        pub est_error_us: i64,
        pub status: i32,
        pub time_constant: i64,
        pub precision_us: i64,
        pub tolerance: i64,
        pub time_sec: i64,
        pub time_frac: i64,
        pub tick: i64,
        pub tai: i32,
    }

    /// clock_gettime(2) on `"realtime" | "monotonic" | "boottime"`; never blocks.
    #[napi]
    pub fn clock_get_time(clock: String) -> napi::Result<Timespec> {
        let (sec, nsec) = super::get_time(super::clock_id(&clock)?)?;
        Ok(Timespec { sec, nsec })
    }

    /// clock_settime(2).
    #[napi]
    pub async fn clock_set_time(clock: String, sec: i64, nsec: u32) -> napi::Result<()> {
        blocking("clock_settime", move || {
            super::set_time(super::clock_id(&clock)?, sec, nsec)
        })
        .await
    }

    /// adjtimex(2); never blocks.
    #[napi]
    pub fn adjtimex(req: AdjtimexRequest) -> napi::Result<AdjtimexState> {
        let s = super::adjtimex(&super::Adjust {
            offset_ns: req.offset_ns,
            singleshot_us: req.singleshot_us,
            frequency: req.frequency,
            max_error_us: req.max_error_us,
            est_error_us: req.est_error_us,
            status: req.status,
            time_constant: req.time_constant,
            tick: req.tick,
        })?;
        Ok(AdjtimexState {
            state: s.state,
            offset: s.offset,
            frequency: s.frequency,
            max_error_us: s.max_error_us,
            est_error_us: s.est_error_us,
            status: s.status,
            time_constant: s.time_constant,
            precision_us: s.precision_us,
            tolerance: s.tolerance,
            time_sec: s.time_sec,
            time_frac: s.time_frac,
            tick: s.tick,
            tai: s.tai,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_advances() {
        let id = clock_id("monotonic").unwrap();
        let a = get_time(id).unwrap();
        let b = get_time(id).unwrap();
        assert!(b >= a);
    }

    #[test]
    fn read_only_adjtimex() {
        let s = adjtimex(&Adjust::default()).unwrap();
        assert!((0..=5).contains(&s.state));
    }

    #[test]
    fn setting_monotonic_is_einval() {
        let e = set_time(clock_id("monotonic").unwrap(), 1, 0).unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("clock_settime", libc::EINVAL));
    }

    #[test]
    fn exclusive_offsets() {
        let adj = Adjust {
            offset_ns: Some(1),
            singleshot_us: Some(1),
            ..Default::default()
        };
        assert_eq!(adjtimex(&adj).unwrap_err().errno, libc::EINVAL);
    }
}
