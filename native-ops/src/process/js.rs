//! napi bindings for the process domain; thin wrappers over the plain modules.

use std::os::fd::IntoRawFd;
use std::time::Duration;

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

use super::hub::Hub;
use super::oci::{self, OciProfile, OciRule};
use super::pump::Pump;
use super::reaper;
use super::seccomp::{ArgCmp, Profile};
use super::spawn::{self, SpawnSpec, Stdio};
use crate::util::blocking;

/// One argument comparison of an OCI seccomp rule.
#[napi(object)]
pub struct SeccompArgJs {
    pub index: u32,
    /// Up to 2^53 (a JS number).
    pub value: i64,
    pub value_two: Option<i64>,
    /// `SCMP_CMP_EQ` | `SCMP_CMP_NE` | `SCMP_CMP_MASKED_EQ`.
    pub op: String,
}

/// One rule of an OCI seccomp profile.
#[napi(object)]
pub struct SeccompRuleJs {
    pub names: Vec<String>,
    pub action: String,
    pub errno_ret: Option<u32>,
    pub args: Option<Vec<SeccompArgJs>>,
}

/// An OCI seccomp profile (validated by config first; native-ops checks again).
#[napi(object)]
pub struct SeccompProfileJs {
    pub default_action: String,
    pub default_errno_ret: Option<u32>,
    pub syscalls: Vec<SeccompRuleJs>,
}

fn oci_profile(p: SeccompProfileJs) -> crate::error::SysResult<Profile> {
    let mut syscalls = Vec::with_capacity(p.syscalls.len());
    for r in p.syscalls {
        let mut args = Vec::new();
        for a in r.args.unwrap_or_default() {
            args.push(ArgCmp {
                index: a.index,
                value: a.value as u64,
                value_two: a.value_two.unwrap_or(0) as u64,
                op: oci::cmp_op(&a.op)?,
            });
        }
        syscalls.push(OciRule {
            names: r.names,
            action: r.action,
            errno_ret: r.errno_ret,
            args,
        });
    }
    let profile = OciProfile {
        default_action: p.default_action,
        default_errno_ret: p.default_errno_ret,
        syscalls,
    };
    Ok(Profile::Compiled(oci::compile(&profile)?))
}

/// What to run; mirrors `SpawnSpec` (stdout/stderr: "pipe" | "null" | "inherit").
#[napi(object)]
pub struct SpawnRequest {
    pub path: String,
    pub argv: Vec<String>,
    pub env: Vec<String>,
    pub cwd: Option<String>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub groups: Option<Vec<u32>>,
    pub new_session: Option<bool>,
    pub new_process_group: Option<bool>,
    pub no_new_privs: Option<bool>,
    /// Seccomp profile installed between fork and exec: "default" | "unconfined" (the default).
    pub seccomp: Option<String>,
    /// An OCI seccomp profile compiled before fork; when set it replaces `seccomp`.
    pub seccomp_profile: Option<SeccompProfileJs>,
    /// Capability numbers to keep; all others leave every set. Unset: inherited as they are.
    pub capabilities: Option<Vec<u32>>,
    /// Paths bound read-only onto themselves in a private mount namespace.
    pub read_only_paths: Option<Vec<String>>,
    /// Paths hidden in the private mount namespace (empty read-only tmpfs or /dev/null).
    pub masked_paths: Option<Vec<String>>,
    /// Signal number the child gets when machined dies (default SIGKILL; 0 lets it outlive machined).
    pub parent_death_signal: Option<i32>,
    pub cgroup: Option<String>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
}

/// A started process and the pump ids of its output pipes.
#[napi(object)]
pub struct SpawnResult {
    pub pid: i32,
    pub stdout_pipe: Option<u32>,
    pub stderr_pipe: Option<u32>,
}

/// A reaped child.
#[napi(object)]
pub struct ExitInfo {
    pub pid: i32,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub core_dumped: bool,
}

/// Output read from a pipe; `eof` marks its end (empty data).
#[napi(object)]
pub struct OutputChunk {
    pub pipe: u32,
    pub data: Buffer,
    pub eof: bool,
}

/// One long-poll's worth of events.
#[napi(object)]
pub struct ProcessEvents {
    pub exits: Vec<ExitInfo>,
    pub output: Vec<OutputChunk>,
}

/// Fork and exec; starts the reaper and pump threads on first use.
#[napi]
pub async fn process_spawn(req: SpawnRequest) -> napi::Result<SpawnResult> {
    blocking("spawn", move || {
        reaper::ensure_started()?;
        let pump = Pump::global()?;
        let spec = SpawnSpec {
            path: req.path,
            argv: req.argv,
            env: req.env,
            cwd: req.cwd,
            uid: req.uid,
            gid: req.gid,
            groups: req.groups,
            new_session: req.new_session.unwrap_or(true),
            new_process_group: req.new_process_group.unwrap_or(false),
            no_new_privs: req.no_new_privs.unwrap_or(false),
            seccomp: match req.seccomp_profile {
                Some(p) => oci_profile(p)?,
                None => Profile::parse(req.seccomp.as_deref().unwrap_or("unconfined"))?,
            },
            read_only_paths: req.read_only_paths.unwrap_or_default(),
            masked_paths: req.masked_paths.unwrap_or_default(),
            keep_caps: req.capabilities,
            parent_death_signal: match req.parent_death_signal {
                None => Some(libc::SIGKILL),
                Some(0) => None,
                Some(sig) => Some(sig),
            },
            cgroup: req.cgroup,
            stdout: Stdio::parse(req.stdout.as_deref())?,
            stderr: Stdio::parse(req.stderr.as_deref())?,
        };
        let started = spawn::spawn_on_spawner_thread(spec)?;
        Ok(SpawnResult {
            pid: started.pid,
            stdout_pipe: started.stdout.map(|fd| pump.register(fd.into_raw_fd())),
            stderr_pipe: started.stderr.map(|fd| pump.register(fd.into_raw_fd())),
        })
    })
    .await
}

/// Wait up to `timeout_ms` for exits or output and take them (output capped
/// near `max_bytes` per call). Resolves empty on timeout or [`process_wake`].
#[napi]
pub async fn process_events(timeout_ms: u32, max_bytes: u32) -> napi::Result<ProcessEvents> {
    blocking("process_events", move || {
        let (exits, chunks, freed) =
            Hub::global().wait_events(Duration::from_millis(timeout_ms.into()), max_bytes as usize);
        if freed {
            Pump::global()?.poke();
        }
        Ok(ProcessEvents {
            exits: exits
                .into_iter()
                .map(|e| ExitInfo {
                    pid: e.pid,
                    code: e.code,
                    signal: e.signal,
                    core_dumped: e.core_dumped,
                })
                .collect(),
            output: chunks
                .into_iter()
                .map(|c| OutputChunk {
                    pipe: c.pipe,
                    data: c.data.into(),
                    eof: c.eof,
                })
                .collect(),
        })
    })
    .await
}

/// Make a pending [`process_events`] resolve now.
#[napi]
pub fn process_wake() {
    Hub::global().wake();
}

/// Stop reading a pipe and close it; its eof arrives as an event.
#[napi]
pub fn process_close_pipe(pipe: u32) -> napi::Result<()> {
    Pump::global()?.close(pipe);
    Ok(())
}

/// kill(2): `group` signals the process group `pid`.
#[napi]
pub fn process_kill(pid: i32, signal: i32, group: bool) -> napi::Result<()> {
    Ok(reaper::kill(pid, signal, group)?)
}

/// prctl(PR_SET_CHILD_SUBREAPER).
#[napi]
pub fn set_child_subreaper(on: bool) -> napi::Result<()> {
    Ok(reaper::set_child_subreaper(on)?)
}
