//! fork + execve for supervised processes. Everything the child needs (C
//! strings, pointer arrays, fds, the cgroup.procs handle) is prepared before
//! fork; between fork and exec the child only makes async-signal-safe calls
//! and raw syscalls, because the parent is multithreaded (another thread may
//! hold the malloc lock at fork time). A CLOEXEC pipe reports the failing
//! step and errno back to the parent; EOF on it means exec succeeded.
//!
//! A child dies with machined: it sets `PR_SET_PDEATHSIG` (after its
//! credentials change, which would clear it) and then checks `getppid()`
//! against the parent it was forked from, closing the race where the parent
//! died before the prctl. The signal fires when the forking *thread* ends, so
//! every fork happens on one long-lived thread ([`spawn_on_spawner_thread`]),
//! never on a worker-pool thread that retires when idle.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use super::caps::{self, CapPlan};
use super::hub::Hub;
use super::mounts;
use super::seccomp::{self, Profile};
use crate::error::{SysErr, SysResult};
use crate::util::{check, cstring};

/// Where a child's stdout or stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio {
    Null,
    Inherit,
    Pipe,
}

impl Stdio {
    /// Parse the TypeScript spelling (`None` means pipe).
    pub fn parse(name: Option<&str>) -> SysResult<Self> {
        match name.unwrap_or("pipe") {
            "pipe" => Ok(Self::Pipe),
            "null" => Ok(Self::Null),
            "inherit" => Ok(Self::Inherit),
            other => Err(SysErr::new(
                "spawn",
                libc::EINVAL,
                format!("unknown stdio {other:?}"),
            )),
        }
    }
}

/// What to run and how.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Program path; without a `/` it is looked up in the spec's PATH.
    pub path: String,
    pub argv: Vec<String>,
    /// `NAME=value` entries; the child inherits nothing else.
    pub env: Vec<String>,
    pub cwd: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// Supplementary groups; defaults to none when uid or gid is set.
    pub groups: Option<Vec<u32>>,
    /// setsid(): own session and process group (pgid == pid).
    pub new_session: bool,
    /// setpgid(0, 0) without a new session (ignored with `new_session`).
    pub new_process_group: bool,
    pub no_new_privs: bool,
    /// Seccomp filter installed just before the credentials change.
    pub seccomp: Profile,
    /// Paths made read-only binds of themselves in a private mount namespace.
    pub read_only_paths: Vec<String>,
    /// Paths hidden in the private mount namespace: an empty read-only tmpfs over a
    /// directory, /dev/null over anything else.
    pub masked_paths: Vec<String>,
    /// Capability numbers to keep; every other one leaves all five sets. `None` leaves them as inherited.
    pub keep_caps: Option<Vec<u32>>,
    /// Signal the child gets when machined (the forking thread) dies; `None` lets it outlive us.
    pub parent_death_signal: Option<i32>,
    /// A cgroup directory; the child joins it before exec.
    pub cgroup: Option<String>,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

/// A started child and the parent's ends of its pipes (non-blocking, CLOEXEC).
#[derive(Debug)]
pub struct Spawned {
    pub pid: i32,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The steps the child can fail at, named as the op of the resulting error.
const STEPS: [&str; 19] = [
    "sigprocmask",
    "setsid",
    "setpgid",
    "cgroup.procs",
    "dup2",
    "setgroups",
    "setresgid",
    "setresuid",
    "chdir",
    "prctl",
    "execve",
    "pdeathsig",
    "capbset",
    "seccomp",
    "keepcaps",
    "capset",
    "ambient",
    "read_only_paths",
    "masked_paths",
];

/// Find the program: as given when it has a `/`, else the first executable
/// regular file on the spec's PATH (or a default PATH).
pub fn resolve_program(path: &str, env: &[String]) -> SysResult<String> {
    if path.contains('/') {
        return Ok(path.to_string());
    }
    if path.is_empty() {
        return Err(SysErr::new("execve", libc::ENOENT, "empty program"));
    }
    let search = env
        .iter()
        .find_map(|e| e.strip_prefix("PATH="))
        .unwrap_or(DEFAULT_PATH);
    for dir in search.split(':').filter(|d| !d.is_empty()) {
        let candidate = format!("{dir}/{path}");
        let Ok(c) = CString::new(candidate.as_bytes()) else {
            continue;
        };
        let is_file = std::fs::metadata(&candidate)
            .map(|m| m.is_file())
            .unwrap_or(false);
        // SAFETY: valid C string.
        if is_file && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(candidate);
        }
    }
    Err(SysErr::new("execve", libc::ENOENT, path.to_string()))
}

fn pipe() -> SysResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: writable array of two fds.
    check("pipe2", "", unsafe {
        libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
    })?;
    // SAFETY: pipe2 just returned these fds and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn open(path: &str, flags: libc::c_int, op: &str) -> SysResult<OwnedFd> {
    let c = cstring(op, path)?;
    // SAFETY: valid C string.
    let fd = check(op, path, unsafe {
        libc::open(c.as_ptr(), flags | libc::O_CLOEXEC)
    })?;
    // SAFETY: fresh fd.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn cstrings(op: &str, items: &[String]) -> SysResult<Vec<CString>> {
    items.iter().map(|s| cstring(op, s)).collect()
}

fn null_terminated(items: &[CString]) -> Vec<*const libc::c_char> {
    items
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Everything the child touches, prepared before fork (no allocation after).
struct ChildPlan<'a> {
    spec: &'a SpawnSpec,
    program: &'a CString,
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    cwd: Option<&'a CString>,
    groups: Option<&'a [libc::gid_t]>,
    cgroup_procs: Option<RawFd>,
    stdin: RawFd,
    stdout: Option<RawFd>,
    stderr: Option<RawFd>,
    report: RawFd,
    /// The seccomp program, built before fork.
    filter: Option<&'a [libc::sock_filter]>,
    caps: Option<CapPlan>,
    /// `read_only_paths`, built before fork.
    read_only: &'a [CString],
    /// `masked_paths`, built before fork.
    masked: &'a [CString],
    /// getpid() of the parent before fork, to detect that it died before the prctl.
    parent: libc::pid_t,
}

/// Put `fd` on `target`; when they are equal, just clear CLOEXEC.
unsafe fn move_fd(fd: RawFd, target: RawFd) -> bool {
    if fd == target {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == 0
    } else {
        libc::dup2(fd, target) == target
    }
}

/// Report the failed step and errno to the parent and exit. Async-signal-safe.
unsafe fn fail(report: RawFd, step: usize) -> ! {
    let errno = *libc::__errno_location();
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&(step as u32).to_le_bytes());
    msg[4..].copy_from_slice(&errno.to_le_bytes());
    libc::write(report, msg.as_ptr().cast(), 8);
    libc::_exit(127);
}

/// The child between fork and exec: only async-signal-safe calls and raw syscalls.
unsafe fn child(plan: &ChildPlan) -> ! {
    let r = plan.report;
    // Signals: Deno blocks and handles some; a service starts with defaults.
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
        fail(r, 0);
    }
    let mut dfl: libc::sigaction = std::mem::zeroed();
    dfl.sa_sigaction = libc::SIG_DFL;
    for sig in 1..65 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::sigaction(sig, &dfl, std::ptr::null_mut()); // EINVAL for reserved ones: fine
        }
    }
    if plan.spec.new_session {
        if libc::setsid() < 0 {
            fail(r, 1);
        }
    } else if plan.spec.new_process_group && libc::setpgid(0, 0) != 0 {
        fail(r, 2);
    }
    if let Some(fd) = plan.cgroup_procs {
        // "0" means the writing process in both cgroup v1 and v2.
        if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
            fail(r, 3);
        }
    }
    let stdout = plan.stdout.unwrap_or(1);
    let stderr = plan.stderr.unwrap_or(2);
    if !move_fd(plan.stdin, 0) || !move_fd(stdout, 1) || !move_fd(stderr, 2) {
        fail(r, 4);
    }
    match mounts::private(plan.read_only, plan.masked) {
        Ok(()) => {}
        Err(mounts::Step::ReadOnly) => fail(r, 17),
        Err(mounts::Step::Masked) => fail(r, 18),
    }
    sandbox_before_credentials(plan);
    if let Some(groups) = plan.groups {
        if libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) != 0 {
            fail(r, 5);
        }
    }
    if let Some(gid) = plan.spec.gid {
        if libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0 {
            fail(r, 6);
        }
    }
    if let Some(uid) = plan.spec.uid {
        if libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0 {
            fail(r, 7);
        }
    }
    if let Some(caps) = &plan.caps {
        match caps.apply() {
            Ok(()) => {}
            Err("capset") => fail(r, 15),
            Err(_) => fail(r, 16),
        }
    }
    if let Some(cwd) = plan.cwd {
        if libc::chdir(cwd.as_ptr()) != 0 {
            fail(r, 8);
        }
    }
    // After the credential changes (they clear the parent-death signal).
    if let Some(sig) = plan.spec.parent_death_signal {
        if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) != 0 {
            fail(r, 11);
        }
        if libc::getppid() != plan.parent {
            libc::_exit(127); // the parent died before the prctl: nobody to outlive
        }
    }
    // Nothing the parent opened without CLOEXEC leaks into the service.
    libc::syscall(
        libc::SYS_close_range,
        3u32,
        u32::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    );
    libc::execve(
        plan.program.as_ptr(),
        plan.argv.as_ptr(),
        plan.envp.as_ptr(),
    );
    fail(r, 10);
}

/// The sandbox steps that need machined's privileges, so they come before
/// setresuid: the bounding set (CAP_SETPCAP), no_new_privs, the seccomp
/// filter (no_new_privs or CAP_SYS_ADMIN) and PR_SET_KEEPCAPS, which carries
/// kept capabilities across a change of user. The filter allows every later
/// step (setresuid, capset, prctl, close_range, execve).
unsafe fn sandbox_before_credentials(plan: &ChildPlan) {
    let r = plan.report;
    if let Some(caps) = &plan.caps {
        if !caps.drop_bounding() {
            fail(r, 12);
        }
    }
    if plan.spec.no_new_privs && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        fail(r, 9);
    }
    if let Some(prog) = plan.filter {
        if seccomp::install(prog) != 0 {
            fail(r, 13);
        }
    }
    let keeps = plan.caps.is_some_and(|c| c.keep != 0);
    if keeps && plan.spec.uid.is_some() && libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 {
        fail(r, 14);
    }
}

fn set_nonblocking(fd: &OwnedFd) -> SysResult<()> {
    // SAFETY: valid fd.
    let flags = check("fcntl", "F_GETFL", unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_GETFL)
    })?;
    // SAFETY: valid fd.
    let ret = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) };
    check("fcntl", "F_SETFL", ret).map(|_| ())
}

fn stdio_pipe(mode: Stdio) -> SysResult<Option<(OwnedFd, OwnedFd)>> {
    match mode {
        Stdio::Pipe => {
            let (read, write) = pipe()?;
            set_nonblocking(&read)?;
            Ok(Some((read, write)))
        }
        _ => Ok(None),
    }
}

/// Fork and exec `spec`. Resolves once exec has succeeded (or the child
/// reported which step failed, as a [`SysErr`] with that step as op).
pub fn spawn(spec: &SpawnSpec) -> SysResult<Spawned> {
    if spec.argv.is_empty() {
        return Err(SysErr::new("spawn", libc::EINVAL, "empty argv"));
    }
    let resolved = resolve_program(&spec.path, &spec.env)?;
    let program = cstring("execve", &resolved)?;
    let argv_c = cstrings("execve", &spec.argv)?;
    let env_c = cstrings("execve", &spec.env)?;
    let argv = null_terminated(&argv_c);
    let envp = null_terminated(&env_c);
    let read_only = cstrings("read_only_paths", &spec.read_only_paths)?;
    let masked = cstrings("masked_paths", &spec.masked_paths)?;
    let cwd = spec
        .cwd
        .as_deref()
        .map(|c| cstring("chdir", c))
        .transpose()?;
    let groups: Option<Vec<libc::gid_t>> = match (&spec.groups, spec.uid.or(spec.gid)) {
        (Some(g), _) => Some(g.clone()),
        (None, Some(_)) => Some(Vec::new()),
        (None, None) => None,
    };
    let cgroup = spec
        .cgroup
        .as_deref()
        .map(|dir| {
            open(
                &format!("{dir}/cgroup.procs"),
                libc::O_WRONLY,
                "cgroup.procs",
            )
        })
        .transpose()?;
    let devnull = open("/dev/null", libc::O_RDWR, "open")?;
    let out = stdio_pipe(spec.stdout)?;
    let err = stdio_pipe(spec.stderr)?;
    let child_fd = |mode: Stdio, p: &Option<(OwnedFd, OwnedFd)>| match (mode, p) {
        (Stdio::Pipe, Some((_, w))) => Some(w.as_raw_fd()),
        (Stdio::Null, _) => Some(devnull.as_raw_fd()),
        _ => None,
    };
    let filter = spec.seccomp.program();
    let caps = match &spec.keep_caps {
        Some(keep) => {
            let (effective, permitted) = caps::current()?;
            Some(CapPlan::new(
                caps::mask(keep)?,
                effective,
                permitted,
                caps::last_cap(),
            ))
        }
        None => None,
    };
    let (report_read, report_write) = pipe()?;
    let plan = ChildPlan {
        spec,
        program: &program,
        argv: &argv,
        envp: &envp,
        cwd: cwd.as_ref(),
        groups: groups.as_deref(),
        cgroup_procs: cgroup.as_ref().map(|f| f.as_raw_fd()),
        stdin: devnull.as_raw_fd(),
        stdout: child_fd(spec.stdout, &out),
        stderr: child_fd(spec.stderr, &err),
        report: report_write.as_raw_fd(),
        filter: filter.as_deref(),
        caps,
        read_only: &read_only,
        masked: &masked,
        // SAFETY: getpid never fails.
        parent: unsafe { libc::getpid() },
    };
    // SAFETY: the child runs only `child`, which never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SysErr::last("fork", resolved));
    }
    if pid == 0 {
        // SAFETY: in the child; see `child`.
        unsafe { child(&plan) }
    }
    Hub::global().child_spawned();
    drop(report_write);
    drop(cgroup);
    drop(devnull);
    let stdout = out.map(|(r, _w)| r);
    let stderr = err.map(|(r, _w)| r);
    match read_report(&report_read) {
        None => Ok(Spawned {
            pid,
            stdout,
            stderr,
        }),
        Some((step, errno)) => {
            Hub::global().ignore_exit(pid);
            let op = STEPS.get(step as usize).copied().unwrap_or("spawn");
            let detail = if op == "cgroup.procs" {
                spec.cgroup.clone().unwrap_or_default()
            } else if op == "chdir" {
                spec.cwd.clone().unwrap_or_default()
            } else {
                resolved
            };
            Err(SysErr::new(op, errno, detail))
        }
    }
}

type Job = (SpawnSpec, mpsc::Sender<SysResult<Spawned>>);

static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();

/// [`spawn`] on the one spawner thread, which lives as long as the process, so
/// a child's parent-death signal fires when machined dies and not when a
/// worker thread retires. Blocks the caller until the spawn is done.
pub fn spawn_on_spawner_thread(spec: SpawnSpec) -> SysResult<Spawned> {
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("machined-spawner".into())
            .spawn(move || {
                for (spec, reply) in rx {
                    let _ = reply.send(spawn(&spec));
                }
            });
        if let Err(e) = started {
            eprintln!("machined-native: cannot start the spawner thread: {e}");
        }
        Mutex::new(tx)
    });
    let (reply, result) = mpsc::channel();
    let sent = sender
        .lock()
        .map_err(|_| SysErr::new("spawn", libc::EIO, "spawner lock poisoned"))?
        .send((spec, reply));
    if sent.is_err() {
        return Err(SysErr::new("spawn", libc::EAGAIN, "no spawner thread"));
    }
    result
        .recv()
        .map_err(|_| SysErr::new("spawn", libc::EIO, "spawner thread ended"))?
}

/// Read the child's failure report: `None` on EOF (exec succeeded).
fn read_report(fd: &OwnedFd) -> Option<(u32, i32)> {
    let mut msg = [0u8; 8];
    let mut got = 0;
    while got < msg.len() {
        // SAFETY: writable remainder of msg.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                msg[got..].as_mut_ptr().cast(),
                msg.len() - got,
            )
        };
        if n == 0 {
            break;
        }
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Some((u32::MAX, libc::EIO));
        }
        got += n as usize;
    }
    match got {
        0 => None,
        8 => {
            let step = u32::from_le_bytes([msg[0], msg[1], msg[2], msg[3]]);
            let errno = i32::from_le_bytes([msg[4], msg[5], msg[6], msg[7]]);
            Some((step, errno))
        }
        _ => Some((u32::MAX, libc::EIO)),
    }
}

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod tests;
