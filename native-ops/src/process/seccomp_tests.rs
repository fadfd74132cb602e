//! Tests of the BPF builder: a tiny classic-BPF interpreter runs the programs
//! on synthetic `seccomp_data`, and one test installs the default profile in a
//! forked child and checks the kernel's answer.

use super::*;

use super::tests_support::run;

fn nr_of(n: i64) -> u32 {
    n as u32
}

const EPERM_RET: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

#[test]
fn builder_layout_is_arch_check_then_rules_then_default() {
    let prog = Builder::new(AUDIT_ARCH, Action::KillProcess)
        .syscall(42, Action::Errno(1))
        .build(Action::Allow);
    assert_eq!(prog.len(), 4 + 2 + 1);
    assert_eq!(
        run(&prog, AUDIT_ARCH, 42, [0; 6]),
        libc::SECCOMP_RET_ERRNO | 1
    );
    assert_eq!(run(&prog, AUDIT_ARCH, 43, [0; 6]), libc::SECCOMP_RET_ALLOW);
}

#[test]
fn foreign_arch_is_killed_whatever_the_number() {
    let prog = default_program();
    for arch in [
        0x4000_0003u32, /* i386 */
        0x4000_0028,    /* arm */
        0,
    ] {
        for nr in [0u32, 1, nr_of(libc::SYS_mount), 500] {
            assert_eq!(run(&prog, arch, nr, [0; 6]), libc::SECCOMP_RET_KILL_PROCESS);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn x32_numbers_are_killed() {
    let prog = default_program();
    let ret = run(
        &prog,
        AUDIT_ARCH,
        X32_SYSCALL_BIT | nr_of(libc::SYS_read),
        [0; 6],
    );
    assert_eq!(ret, libc::SECCOMP_RET_KILL_PROCESS);
}

#[test]
fn default_profile_denies_the_list_and_allows_the_rest() {
    let prog = default_program();
    for nr in default_denied() {
        assert_eq!(
            run(&prog, AUDIT_ARCH, nr_of(nr), [0; 6]),
            EPERM_RET,
            "syscall {nr}"
        );
    }
    for nr in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_openat,
        libc::SYS_execve,
        libc::SYS_prctl,
        libc::SYS_capset,
        libc::SYS_exit_group,
        libc::SYS_close_range,
        libc::SYS_setresuid,
    ] {
        assert_eq!(
            run(&prog, AUDIT_ARCH, nr_of(nr), [0; 6]),
            libc::SECCOMP_RET_ALLOW,
            "{nr}"
        );
    }
}

#[test]
fn namespace_flags_on_unshare_and_clone_are_denied_others_allowed() {
    let prog = default_program();
    for nr in [libc::SYS_unshare, libc::SYS_clone] {
        let nr = nr_of(nr);
        let ns = [
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWNS,
            libc::CLONE_NEWNET,
            0x80,
        ];
        for flag in ns {
            let args = [flag as u64 | libc::SIGCHLD as u64, 0, 0, 0, 0, 0];
            assert_eq!(
                run(&prog, AUDIT_ARCH, nr, args),
                EPERM_RET,
                "flag {flag:#x}"
            );
        }
        let plain = (libc::CLONE_FILES | libc::CLONE_VM | libc::CLONE_THREAD) as u64;
        let allowed = run(&prog, AUDIT_ARCH, nr, [plain, 0, 0, 0, 0, 0]);
        assert_eq!(allowed, libc::SECCOMP_RET_ALLOW);
    }
    let clone3 = run(&prog, AUDIT_ARCH, nr_of(libc::SYS_clone3), [0; 6]);
    assert_eq!(clone3, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
}

#[test]
fn every_jump_lands_inside_the_program() {
    let prog = default_program();
    assert!(prog.len() < 4096, "BPF_MAXINSNS");
    for (pc, i) in prog.iter().enumerate() {
        if i.code & 0x07 == 0x05 {
            assert!(
                pc + 1 + usize::from(i.jt.max(i.jf)) < prog.len(),
                "jump at {pc}"
            );
        }
    }
    assert_eq!(prog.last().unwrap().code, BPF_RET_K);
}

#[test]
fn profiles_parse() {
    assert!(Profile::parse("default").unwrap().program().is_some());
    assert!(Profile::parse("unconfined").unwrap().program().is_none());
    assert_eq!(Profile::parse("strict").unwrap_err().errno, libc::EINVAL);
}

/// The kernel accepts the program and answers EPERM for mount(2) while
/// getpid still works. Runs in a forked child so the test process stays
/// unfiltered; the child only makes raw syscalls.
#[test]
fn kernel_applies_the_default_profile_in_a_child() {
    let prog = default_program();
    let target = c"/nonexistent-seccomp-test";
    let fstype = c"tmpfs";
    // SAFETY: the child makes only raw syscalls and _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                libc::_exit(10);
            }
            if install(&prog) != 0 {
                libc::_exit(11);
            }
            let r = libc::mount(
                fstype.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                0,
                std::ptr::null(),
            );
            let errno = *libc::__errno_location();
            if r != -1 || errno != libc::EPERM {
                libc::_exit(12);
            }
            if libc::getpid() <= 0 {
                libc::_exit(13);
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "status {status:#x}");
    assert_eq!(libc::WEXITSTATUS(status), 0);
}

/// The sizes docs/hardening.md and docs/decisions.md quote.
#[cfg(target_arch = "x86_64")]
#[test]
fn default_profile_sizes_on_x86_64() {
    assert_eq!(default_denied().len(), 41);
    assert_eq!(default_program().len(), 101);
}
