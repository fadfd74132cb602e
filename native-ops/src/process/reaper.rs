//! The one owner of waitid(2) in the process: a dedicated thread blocked in
//! `waitid(P_ALL, WEXITED)` that reaps every child — the ones we spawned and
//! orphans reparented to us as PID 1 or as a child subreaper — and queues each
//! exit on the [`Hub`]. No SIGCHLD handler is involved (Deno owns signal
//! handling). On ECHILD (no children at all, hence no descendants that could
//! become orphans) the thread sleeps on a condvar that spawn signals.
//!
//! Consequence: while the reaper has children, it also reaps children that
//! other code in this process forked (e.g. `Deno.Command`), which then fail to
//! wait. Supervised processes must go through `spawn`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::Duration;

use super::hub::{Exit, Hub};
use crate::error::{SysErr, SysResult};
use crate::util::check;

static START: Once = Once::new();
/// Set when orphans may arrive without a spawn of ours (PID 1, subreaper):
/// the idle reaper then rechecks every second instead of sleeping until a spawn.
static ADOPTS_ORPHANS: AtomicBool = AtomicBool::new(false);

/// Start the reaper thread once; later calls do nothing.
pub fn ensure_started() -> SysResult<()> {
    let mut result = Ok(());
    START.call_once(|| {
        // SAFETY: getpid never fails.
        if unsafe { libc::getpid() } == 1 {
            ADOPTS_ORPHANS.store(true, Ordering::Relaxed);
        }
        if let Err(e) = std::thread::Builder::new()
            .name("machined-reaper".into())
            .spawn(run)
        {
            result = Err(SysErr::io("pthread_create", "reaper", &e));
        }
    });
    result
}

/// Decode a waitid(2) result into an [`Exit`].
pub fn exit_from_siginfo(info: &libc::siginfo_t) -> Exit {
    // SAFETY: waitid filled a SIGCHLD siginfo, for which pid/status are valid.
    let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
    match info.si_code {
        libc::CLD_EXITED => Exit {
            pid,
            code: Some(status),
            signal: None,
            core_dumped: false,
        },
        code => Exit {
            pid,
            code: None,
            signal: Some(status),
            core_dumped: code == libc::CLD_DUMPED,
        },
    }
}

fn run() {
    let hub = Hub::global();
    loop {
        let seen = hub.generation();
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: writable siginfo_t.
        let ret = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED) };
        if ret == 0 {
            hub.push_exit(exit_from_siginfo(&info));
            continue;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::ECHILD) => {
                let limit = ADOPTS_ORPHANS
                    .load(Ordering::Relaxed)
                    .then(|| Duration::from_secs(1));
                hub.wait_for_children(seen, limit);
            }
            // Not expected from waitid with these arguments; do not spin.
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// prctl(PR_SET_CHILD_SUBREAPER): orphaned descendants are reparented to this
/// process instead of PID 1 (tests and dev mode stand in for PID 1 this way).
pub fn set_child_subreaper(on: bool) -> SysResult<()> {
    // SAFETY: plain prctl.
    let ret = unsafe {
        libc::prctl(
            libc::PR_SET_CHILD_SUBREAPER,
            libc::c_ulong::from(on),
            0,
            0,
            0,
        )
    };
    check("prctl", "PR_SET_CHILD_SUBREAPER", ret)?;
    // SAFETY: getpid never fails.
    ADOPTS_ORPHANS.store(on || unsafe { libc::getpid() } == 1, Ordering::Relaxed);
    Ok(())
}

/// kill(2) on a process, or on a whole process group when `group` is set.
pub fn kill(pid: i32, signal: i32, group: bool) -> SysResult<()> {
    if pid <= 0 {
        return Err(SysErr::new("kill", libc::EINVAL, format!("pid {pid}")));
    }
    let target = if group { -pid } else { pid };
    // SAFETY: plain kill with a positive pid or a negated pgid.
    let ret = unsafe { libc::kill(target, signal) };
    check("kill", &target.to_string(), ret).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_rejects_pid_zero_and_missing() {
        assert_eq!(kill(0, 0, false).unwrap_err().errno, libc::EINVAL);
        // pid_max is at most 2^22, so this pid cannot exist.
        let e = kill(i32::MAX, 0, false).unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("kill", libc::ESRCH));
    }
}
