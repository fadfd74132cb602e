//! Seccomp filters for supervised services: a small classic-BPF builder and
//! the `default` profile, a deny-list of syscalls no service on this node
//! needs (see docs/hardening.md for the list and why). The program is built in
//! the parent before fork; the child only makes the `seccomp(2)` call.
//!
//! Every program starts by checking the audit architecture: a syscall made
//! through another ABI (i386 on x86_64, arm32 compat on aarch64) carries
//! other numbers and would slip past a deny-list, so it kills the process.
//! On x86_64 the x32 ABI (numbers with bit 30 set) is killed as well.

use crate::error::{SysErr, SysResult};

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JMP_JGT_K: u16 = 0x05 | 0x20;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_JMP_JSET_K: u16 = 0x05 | 0x40;
const BPF_RET_K: u16 = 0x06;
const BPF_ALU_AND_K: u16 = 0x04 | 0x50; // BPF_ALU | BPF_AND | BPF_K

// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of argument `i` (both supported targets are little-endian).
const fn off_arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

/// The audit architecture this build runs on (linux/audit.h).
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = 0xC000_00B7;

/// x32 syscalls on x86_64 have this bit set in their number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// What the filter does with a syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Errno(u16),
    KillProcess,
    KillThread,
    Trap,
    Log,
}

impl Action {
    pub fn ret(self) -> u32 {
        match self {
            Action::Allow => libc::SECCOMP_RET_ALLOW,
            Action::Errno(e) => libc::SECCOMP_RET_ERRNO | u32::from(e),
            Action::KillProcess => libc::SECCOMP_RET_KILL_PROCESS,
            Action::KillThread => libc::SECCOMP_RET_KILL_THREAD,
            Action::Trap => libc::SECCOMP_RET_TRAP,
            Action::Log => libc::SECCOMP_RET_LOG,
        }
    }
}

/// A seccomp profile as the spawn request names it, or an OCI profile
/// compiled before fork (oci.rs).
#[derive(Debug, Clone)]
pub enum Profile {
    Default,
    Unconfined,
    Compiled(Vec<libc::sock_filter>),
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Default, Self::Default) | (Self::Unconfined, Self::Unconfined) => true,
            (Self::Compiled(a), Self::Compiled(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| (x.code, x.jt, x.jf, x.k) == (y.code, y.jt, y.jf, y.k))
            }
            _ => false,
        }
    }
}

impl Profile {
    pub fn parse(name: &str) -> SysResult<Self> {
        match name {
            "default" => Ok(Self::Default),
            "unconfined" => Ok(Self::Unconfined),
            other => Err(SysErr::new(
                "seccomp",
                libc::EINVAL,
                format!("unknown seccomp profile {other:?}"),
            )),
        }
    }

    /// The program to install, or `None` for no filter.
    pub fn program(&self) -> Option<Vec<libc::sock_filter>> {
        match self {
            Self::Default => Some(default_program()),
            Self::Unconfined => None,
            Self::Compiled(prog) => Some(prog.clone()),
        }
    }
}

/// Builds a filter: an architecture check, then rules tested in order, then
/// the default action. Each rule leaves the accumulator holding the syscall
/// number when it does not match, so rules compose without reloads.
#[derive(Debug)]
pub struct Builder {
    prog: Vec<libc::sock_filter>,
}

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

impl Builder {
    /// Starts with the architecture check: another `arch` gets `foreign`.
    pub fn new(arch: u32, foreign: Action) -> Self {
        let prog = vec![
            ins(BPF_LD_W_ABS, 0, 0, OFF_ARCH),
            ins(BPF_JMP_JEQ_K, 1, 0, arch),
            ins(BPF_RET_K, 0, 0, foreign.ret()),
            ins(BPF_LD_W_ABS, 0, 0, OFF_NR),
        ];
        Self { prog }
    }

    /// Syscall numbers at or above `nr` get `action` (x32's bit on x86_64).
    pub fn at_or_above(mut self, nr: u32, action: Action) -> Self {
        self.prog.push(ins(BPF_JMP_JGE_K, 0, 1, nr));
        self.prog.push(ins(BPF_RET_K, 0, 0, action.ret()));
        self
    }

    /// Syscall `nr` gets `action`.
    pub fn syscall(mut self, nr: i64, action: Action) -> Self {
        self.prog.push(ins(BPF_JMP_JEQ_K, 0, 1, nr as u32));
        self.prog.push(ins(BPF_RET_K, 0, 0, action.ret()));
        self
    }

    /// Syscall `nr` gets `action` when argument `arg` has any bit of `mask`
    /// set (in its low 32 bits) and is allowed otherwise.
    pub fn syscall_if_any_bit(mut self, nr: i64, arg: u32, mask: u32, action: Action) -> Self {
        self.prog.push(ins(BPF_JMP_JEQ_K, 0, 4, nr as u32));
        self.prog.push(ins(BPF_LD_W_ABS, 0, 0, off_arg_lo(arg)));
        self.prog.push(ins(BPF_JMP_JSET_K, 0, 1, mask));
        self.prog.push(ins(BPF_RET_K, 0, 0, action.ret()));
        self.prog.push(ins(BPF_RET_K, 0, 0, Action::Allow.ret()));
        self
    }

    /// Syscall `nr` gets `action` when every comparison of `args` holds;
    /// otherwise the next rule is tried (the accumulator is reloaded).
    pub fn syscall_if_args(mut self, nr: i64, args: &[ArgCmp], action: Action) -> Self {
        // Each step with the index just past its comparison (where `Held` goes).
        let mut steps: Vec<(Step, usize)> = Vec::new();
        for a in args {
            let c = comparison(a);
            let end = steps.len() + c.len();
            steps.extend(c.into_iter().map(|s| (s, end)));
        }
        // After the steps: the action (every comparison held), then the reload (one failed).
        let failed = steps.len() + 1;
        // At most six comparisons of six steps: every offset fits a BPF jump's u8.
        let offset = |to: To, at: usize, end: usize| -> u8 {
            let target = match to {
                To::Next => at + 1,
                To::Held => end,
                To::Failed => failed,
            };
            u8::try_from(target - at - 1).unwrap_or(u8::MAX)
        };
        let mut body: Vec<libc::sock_filter> = steps
            .iter()
            .enumerate()
            .map(|(at, (s, end))| {
                let mut i = s.ins;
                i.jt = offset(s.jt, at, *end);
                i.jf = offset(s.jf, at, *end);
                i
            })
            .collect();
        body.push(ins(BPF_RET_K, 0, 0, action.ret()));
        body.push(ins(BPF_LD_W_ABS, 0, 0, OFF_NR));
        let skip = u8::try_from(body.len()).unwrap_or(u8::MAX);
        self.prog.push(ins(BPF_JMP_JEQ_K, 0, skip, nr as u32));
        self.prog.extend(body);
        self
    }

    /// Ends with the action for everything no rule matched.
    pub fn build(mut self, otherwise: Action) -> Vec<libc::sock_filter> {
        self.prog.push(ins(BPF_RET_K, 0, 0, otherwise.ret()));
        self.prog
    }
}

/// A comparison of one syscall argument (all 64 bits, unsigned, as libseccomp's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    /// `arg & value == value_two`.
    MaskedEq,
    /// `arg < value`.
    Lt,
    /// `arg <= value`.
    Le,
    /// `arg > value`.
    Gt,
    /// `arg >= value`.
    Ge,
}

/// Where a comparison's jump goes: the next instruction, past the comparison
/// (it held), or to the rule's reload (it failed: the next rule is tried).
#[derive(Debug, Clone, Copy)]
enum To {
    Next,
    Held,
    Failed,
}

/// One instruction of a comparison, its jumps still symbolic.
struct Step {
    ins: libc::sock_filter,
    jt: To,
    jf: To,
}

fn load(off: u32) -> Step {
    Step {
        ins: ins(BPF_LD_W_ABS, 0, 0, off),
        jt: To::Next,
        jf: To::Next,
    }
}

fn jump(code: u16, k: u32, jt: To, jf: To) -> Step {
    Step {
        ins: ins(code, 0, 0, k),
        jt,
        jf,
    }
}

/// The steps of one 64-bit comparison on 32-bit BPF: the high half first,
/// the low half deciding only when the high halves are equal.
fn comparison(a: &ArgCmp) -> Vec<Step> {
    let (hi_off, lo_off) = (off_arg_lo(a.index) + 4, off_arg_lo(a.index));
    let hi = |v: u64| (v >> 32) as u32;
    let lo = |v: u64| v as u32;
    match a.op {
        CmpOp::Eq | CmpOp::Ne | CmpOp::MaskedEq => {
            let (mask, want) = match a.op {
                CmpOp::MaskedEq => (a.value, a.value_two),
                _ => (u64::MAX, a.value),
            };
            let ne = a.op == CmpOp::Ne;
            let mut steps = Vec::new();
            for (low, off, m, w) in [
                (false, hi_off, hi(mask), hi(want)),
                (true, lo_off, lo(mask), lo(want)),
            ] {
                steps.push(load(off));
                if m != u32::MAX {
                    steps.push(jump(BPF_ALU_AND_K, m, To::Next, To::Next));
                }
                // Equal halves go on; a difference fails Eq and MaskedEq and makes Ne hold.
                // Ne fails only when the low halves are equal too.
                let (on_equal, on_differ) = match (ne, low) {
                    (false, _) => (To::Next, To::Failed),
                    (true, false) => (To::Next, To::Held),
                    (true, true) => (To::Failed, To::Held),
                };
                steps.push(jump(BPF_JMP_JEQ_K, w, on_equal, on_differ));
            }
            steps
        }
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
            let greater = matches!(a.op, CmpOp::Gt | CmpOp::Ge);
            // Where a larger and a smaller argument go.
            let (larger, smaller) = if greater {
                (To::Held, To::Failed)
            } else {
                (To::Failed, To::Held)
            };
            // The low half: Gt and Le split on `>`, Ge and Lt on `>=`.
            let low = if matches!(a.op, CmpOp::Gt | CmpOp::Le) {
                BPF_JMP_JGT_K
            } else {
                BPF_JMP_JGE_K
            };
            let v = a.value;
            vec![
                load(hi_off),
                jump(BPF_JMP_JGT_K, hi(v), larger, To::Next),
                jump(BPF_JMP_JEQ_K, hi(v), To::Next, smaller),
                load(lo_off),
                jump(low, lo(v), larger, smaller),
            ]
        }
    }
}

/// One argument comparison of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgCmp {
    pub index: u32,
    pub value: u64,
    pub value_two: u64,
    pub op: CmpOp,
}

/// Namespace-creating clone/unshare flags (linux/sched.h).
pub const CLONE_NEW_MASK: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWCGROUP
    | 0x80) as u32; // CLONE_NEWTIME

/// Syscalls the `default` profile refuses with EPERM, by group; the groups
/// and the reasons are in docs/hardening.md.
pub fn default_denied() -> Vec<i64> {
    // `mut` only for x86_64's port-I/O calls below.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut nrs = vec![
        // Filesystem tree and mounts, including the new mount API.
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_open_by_handle_at,
        // The kernel itself: modules, kexec, reboot.
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        // Kernel attack surface a service does not use.
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Other processes' memory.
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        // Namespaces: joining one (creating one is checked on unshare/clone flags).
        libc::SYS_setns,
        // Node-wide state: clock, accounting, names.
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_acct,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
    ];
    #[cfg(target_arch = "x86_64")]
    nrs.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    nrs
}

/// The `default` profile's program for this build's architecture.
pub fn default_program() -> Vec<libc::sock_filter> {
    let eperm = Action::Errno(libc::EPERM as u16);
    let mut b = Builder::new(AUDIT_ARCH, Action::KillProcess);
    #[cfg(target_arch = "x86_64")]
    {
        b = b.at_or_above(X32_SYSCALL_BIT, Action::KillProcess);
    }
    for nr in default_denied() {
        b = b.syscall(nr, eperm);
    }
    // clone3 passes its flags in memory, which BPF cannot read: ENOSYS makes
    // libc fall back to clone(2), whose flags are checked.
    b = b.syscall(libc::SYS_clone3, Action::Errno(libc::ENOSYS as u16));
    b = b.syscall_if_any_bit(libc::SYS_unshare, 0, CLONE_NEW_MASK, eperm);
    b = b.syscall_if_any_bit(libc::SYS_clone, 0, CLONE_NEW_MASK, eperm);
    b.build(Action::Allow)
}

/// Installs `prog` on the calling thread. Async-signal-safe: one syscall on
/// memory prepared before fork. Needs no_new_privs or CAP_SYS_ADMIN.
///
/// # Safety
/// `prog` must stay alive for the call (the kernel copies it).
pub unsafe fn install(prog: &[libc::sock_filter]) -> libc::c_long {
    let fprog = libc::sock_fprog {
        len: prog.len() as libc::c_ushort,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    libc::syscall(
        libc::SYS_seccomp,
        libc::SECCOMP_SET_MODE_FILTER,
        0,
        &fprog as *const libc::sock_fprog,
    )
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;

/// The BPF interpreter the tests of this module and oci.rs share.
#[cfg(test)]
pub mod tests_support {
    use super::*;

    /// Runs `prog` the way the kernel's seccomp BPF does (the subset we emit).
    pub fn run(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let mut acc: u32 = 0;
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => {
                    let k = i.k as usize;
                    acc = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                }
                BPF_JMP_JEQ_K | BPF_JMP_JGT_K | BPF_JMP_JGE_K | BPF_JMP_JSET_K => {
                    let hit = match i.code {
                        BPF_JMP_JEQ_K => acc == i.k,
                        BPF_JMP_JGT_K => acc > i.k,
                        BPF_JMP_JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if hit { i.jt } else { i.jf });
                }
                BPF_ALU_AND_K => acc &= i.k,
                BPF_RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }
}
