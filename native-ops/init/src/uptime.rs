//! The guest's own clock for the boot console: seconds since the kernel
//! started (CLOCK_BOOTTIME, what /proc/uptime shows), so the host can put
//! machined-init's lines on the same time line as machined's `uptime_s=`
//! figures without trusting the wall clock, which is not set yet.

use std::time::Duration;

/// CLOCK_BOOTTIME now; zero if the kernel refuses (it never does on Linux ≥ 2.6.39).
pub fn now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// ` uptime_s=2.04`: the field every timed boot line ends with, in /proc/uptime's precision.
pub fn field(uptime: Duration) -> String {
    format!(" uptime_s={:.2}", uptime.as_secs_f64())
}

/// machined-init's first line, printed before it mounts anything: when the kernel handed over.
pub fn start_line(uptime: Duration) -> String {
    format!("machined-init: start{}", field(uptime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_line_carries_the_uptime_in_hundredths_of_a_second() {
        assert_eq!(
            start_line(Duration::from_millis(2_036)),
            "machined-init: start uptime_s=2.04"
        );
        assert_eq!(field(Duration::ZERO), " uptime_s=0.00");
        assert_eq!(field(Duration::from_secs(75)), " uptime_s=75.00");
    }

    #[test]
    fn the_boot_clock_runs_forward() {
        let a = now();
        let b = now();
        assert!(a > Duration::ZERO && b >= a, "{a:?} {b:?}");
    }
}
