//! OCI seccomp profiles (`machine.seccomp_profiles`, validated in TypeScript
//! first) compiled to a filter with the same builder as the `default` profile:
//! the architecture check and x32's kill first (other ABIs would slip past
//! any list), then each rule in order (the first that matches decides), then
//! `defaultAction`. Names this architecture lacks are skipped, as OCI
//! runtimes do.

use super::seccomp::{Action, ArgCmp, Builder, CmpOp, AUDIT_ARCH};
use super::syscall_table::syscall_nr;
use crate::error::{SysErr, SysResult};

/// One rule: these syscalls, when every comparison holds, get `action`.
#[derive(Debug, Clone)]
pub struct OciRule {
    pub names: Vec<String>,
    pub action: String,
    pub errno_ret: Option<u32>,
    pub args: Vec<ArgCmp>,
}

/// A profile as the spawn request carries it.
#[derive(Debug, Clone)]
pub struct OciProfile {
    pub default_action: String,
    pub default_errno_ret: Option<u32>,
    pub syscalls: Vec<OciRule>,
}

fn bad(msg: String) -> SysErr {
    SysErr::new("seccomp", libc::EINVAL, msg)
}

/// An OCI action name; ERRNO returns `errno` (EPERM when unset).
pub fn action(name: &str, errno: Option<u32>) -> SysResult<Action> {
    Ok(match name {
        "SCMP_ACT_ALLOW" => Action::Allow,
        "SCMP_ACT_ERRNO" => {
            let e = errno.unwrap_or(libc::EPERM as u32);
            Action::Errno(
                u16::try_from(e)
                    .ok()
                    .filter(|e| *e < 4096)
                    .ok_or_else(|| bad(format!("errnoRet {e} is over 4095")))?,
            )
        }
        "SCMP_ACT_KILL" | "SCMP_ACT_KILL_THREAD" => Action::KillThread,
        "SCMP_ACT_KILL_PROCESS" => Action::KillProcess,
        "SCMP_ACT_TRAP" => Action::Trap,
        "SCMP_ACT_LOG" => Action::Log,
        other => return Err(bad(format!("unsupported seccomp action {other:?}"))),
    })
}

/// An OCI comparison name (`SCMP_CMP_EQ`, `NE`, `MASKED_EQ`, `LT`, `LE`, `GT`, `GE`).
pub fn cmp_op(name: &str) -> SysResult<CmpOp> {
    match name {
        "SCMP_CMP_EQ" => Ok(CmpOp::Eq),
        "SCMP_CMP_NE" => Ok(CmpOp::Ne),
        "SCMP_CMP_MASKED_EQ" => Ok(CmpOp::MaskedEq),
        "SCMP_CMP_LT" => Ok(CmpOp::Lt),
        "SCMP_CMP_LE" => Ok(CmpOp::Le),
        "SCMP_CMP_GT" => Ok(CmpOp::Gt),
        "SCMP_CMP_GE" => Ok(CmpOp::Ge),
        other => Err(bad(format!("unsupported seccomp comparison {other:?}"))),
    }
}

/// The program for `p` on this build's architecture.
pub fn compile(p: &OciProfile) -> SysResult<Vec<libc::sock_filter>> {
    let mut b = Builder::new(AUDIT_ARCH, Action::KillProcess);
    #[cfg(target_arch = "x86_64")]
    {
        b = b.at_or_above(0x4000_0000, Action::KillProcess);
    }
    for rule in &p.syscalls {
        let act = action(&rule.action, rule.errno_ret)?;
        if rule.args.iter().any(|a| a.index > 5) {
            return Err(bad("a syscall argument index is 0 to 5".into()));
        }
        for nr in rule.names.iter().filter_map(|n| syscall_nr(n)) {
            b = if rule.args.is_empty() {
                b.syscall(nr, act)
            } else {
                b.syscall_if_args(nr, &rule.args, act)
            };
        }
    }
    Ok(b.build(action(&p.default_action, p.default_errno_ret)?))
}

#[cfg(test)]
#[path = "oci_tests.rs"]
mod tests;
