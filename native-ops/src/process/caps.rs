//! Capabilities a service keeps. The parent computes the masks before fork
//! ([`CapPlan::new`]); the child applies them with raw syscalls only
//! ([`CapPlan::drop_bounding`] before its credentials change, and
//! [`CapPlan::apply`] after), so every set (bounding, permitted, effective,
//! inheritable, ambient) ends up holding at most the kept capabilities.
//!
//! A service that runs as another user keeps its capabilities through
//! `PR_SET_KEEPCAPS` across setresuid and through the ambient set across
//! execve; a root service gets them back from the bounding set at exec
//! anyway. Capabilities machined itself lacks (dev mode, unprivileged) are
//! not asked for, and the bounding set is left alone without CAP_SETPCAP: the
//! process status (/proc/PID/status) shows what is really in force.

use crate::error::{SysErr, SysResult};

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The calling thread's (effective, permitted) sets as 64-bit masks.
pub fn current() -> SysResult<(u64, u64)> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and two data structs, as capget v3 expects.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if r != 0 {
        return Err(SysErr::last("capget", ""));
    }
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    Ok((
        join(data[0].effective, data[1].effective),
        join(data[0].permitted, data[1].permitted),
    ))
}

/// The highest capability number this kernel knows.
pub fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|n: &u32| *n < 64)
        .unwrap_or(40)
}

/// A mask from capability numbers. @throws EINVAL for a number past 63.
pub fn mask(caps: &[u32]) -> SysResult<u64> {
    caps.iter().try_fold(0u64, |m, &c| {
        if c < 64 {
            Ok(m | (1u64 << c))
        } else {
            Err(SysErr::new(
                "capset",
                libc::EINVAL,
                format!("capability {c}"),
            ))
        }
    })
}

/// What the child does with capabilities; computed before fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapPlan {
    /// Kept and held by machined: what permitted/effective/inheritable/ambient become.
    pub keep: u64,
    /// Drop every other capability up to this number from the bounding set.
    pub last_cap: u32,
    /// machined holds CAP_SETPCAP, so the bounding set can be reduced.
    pub can_drop_bounding: bool,
}

impl CapPlan {
    /// The plan for keeping `wanted` when machined holds `effective`/`permitted`.
    pub fn new(wanted: u64, effective: u64, permitted: u64, last_cap: u32) -> Self {
        Self {
            keep: wanted & permitted,
            last_cap,
            can_drop_bounding: effective & (1 << CAP_SETPCAP) != 0,
        }
    }

    fn kept(&self, cap: u32) -> bool {
        self.keep & (1u64 << cap) != 0
    }

    /// Drops the rest from the bounding set. Before setresuid (it needs
    /// CAP_SETPCAP). Async-signal-safe; returns false with errno set.
    ///
    /// # Safety
    /// Raw prctl calls; meant for the child between fork and exec.
    pub unsafe fn drop_bounding(&self) -> bool {
        if !self.can_drop_bounding {
            return true;
        }
        for cap in 0..=self.last_cap {
            if !self.kept(cap)
                && libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
            {
                return false;
            }
        }
        true
    }

    /// Sets effective, permitted and inheritable to `keep`, then the ambient
    /// set to exactly `keep`. After setresuid (with PR_SET_KEEPCAPS when
    /// something is kept). Async-signal-safe; returns the failing step
    /// (`"capset"` or `"ambient"`) with errno set.
    ///
    /// # Safety
    /// Raw syscalls; meant for the child between fork and exec.
    pub unsafe fn apply(&self) -> Result<(), &'static str> {
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let lo = self.keep as u32;
        let hi = (self.keep >> 32) as u32;
        let data = [
            CapData {
                effective: lo,
                permitted: lo,
                inheritable: lo,
            },
            CapData {
                effective: hi,
                permitted: hi,
                inheritable: hi,
            },
        ];
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err("capset");
        }
        let clear = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        if libc::prctl(libc::PR_CAP_AMBIENT, clear, 0, 0, 0) != 0 {
            return Err("ambient");
        }
        let raise = libc::PR_CAP_AMBIENT_RAISE as libc::c_ulong;
        for cap in 0..=self.last_cap {
            if self.kept(cap)
                && libc::prctl(libc::PR_CAP_AMBIENT, raise, cap as libc::c_ulong, 0, 0) != 0
            {
                return Err("ambient");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_from_numbers() {
        assert_eq!(mask(&[]).unwrap(), 0);
        assert_eq!(mask(&[0, 10, 40]).unwrap(), 1 | (1 << 10) | (1 << 40));
        assert_eq!(mask(&[64]).unwrap_err().errno, libc::EINVAL);
    }

    #[test]
    fn plan_keeps_only_what_machined_holds() {
        let plan = CapPlan::new((1 << 10) | (1 << 21), 1 << 8, 1 << 10, 40);
        assert_eq!(plan.keep, 1 << 10);
        assert!(plan.can_drop_bounding);
        let unprivileged = CapPlan::new(1 << 10, 0, 0, 40);
        assert_eq!(unprivileged.keep, 0);
        assert!(!unprivileged.can_drop_bounding);
    }

    #[test]
    fn reads_own_sets_and_last_cap() {
        let (effective, permitted) = current().unwrap();
        assert_eq!(
            effective & !permitted,
            0,
            "effective is a subset of permitted"
        );
        assert!((35..64).contains(&last_cap()));
    }
}
