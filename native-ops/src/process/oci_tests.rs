//! OCI profiles compiled and run on the BPF interpreter of seccomp_tests.rs
//! (shared through `super::super::seccomp::tests_support`).

use super::*;
use crate::process::seccomp::tests_support::run;

fn profile(default: &str, rules: Vec<OciRule>) -> OciProfile {
    OciProfile {
        default_action: default.into(),
        default_errno_ret: None,
        syscalls: rules,
    }
}

fn rule(names: &[&str], action: &str, errno: Option<u32>, args: Vec<ArgCmp>) -> OciRule {
    OciRule {
        names: names.iter().map(|n| n.to_string()).collect(),
        action: action.into(),
        errno_ret: errno,
        args,
    }
}

fn nr(name: &str) -> u32 {
    syscall_nr(name).unwrap() as u32
}

#[test]
fn mkdirat_denied_with_eperm_rest_allowed() {
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![rule(
            &["mkdir", "mkdirat"],
            "SCMP_ACT_ERRNO",
            Some(1),
            vec![],
        )],
    );
    let prog = compile(&p).unwrap();
    assert_eq!(
        run(&prog, AUDIT_ARCH, nr("mkdirat"), [0; 6]),
        libc::SECCOMP_RET_ERRNO | 1
    );
    assert_eq!(
        run(&prog, AUDIT_ARCH, nr("openat"), [0; 6]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        run(&prog, 0x4000_0003, nr("mkdirat"), [0; 6]),
        libc::SECCOMP_RET_KILL_PROCESS
    );
}

#[test]
fn allow_list_with_errno_default() {
    let p = OciProfile {
        default_action: "SCMP_ACT_ERRNO".into(),
        default_errno_ret: Some(38),
        syscalls: vec![rule(
            &["read", "write", "no_such_call"],
            "SCMP_ACT_ALLOW",
            None,
            vec![],
        )],
    };
    let prog = compile(&p).unwrap();
    assert_eq!(
        run(&prog, AUDIT_ARCH, nr("read"), [0; 6]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        run(&prog, AUDIT_ARCH, nr("openat"), [0; 6]),
        libc::SECCOMP_RET_ERRNO | 38
    );
}

#[test]
fn argument_comparisons_eq_ne_masked_over_64_bits() {
    let eq = ArgCmp {
        index: 1,
        value: 0x1_0000_0002,
        value_two: 0,
        op: CmpOp::Eq,
    };
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![rule(&["personality"], "SCMP_ACT_ERRNO", None, vec![eq])],
    );
    let prog = compile(&p).unwrap();
    let n = nr("personality");
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [0, 0x1_0000_0002, 0, 0, 0, 0]),
        eperm
    );
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [0, 2, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        run(
            &prog,
            AUDIT_ARCH,
            nr("read"),
            [0, 0x1_0000_0002, 0, 0, 0, 0]
        ),
        libc::SECCOMP_RET_ALLOW
    );
    let ne = ArgCmp {
        index: 0,
        value: 8,
        value_two: 0,
        op: CmpOp::Ne,
    };
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![rule(&["personality"], "SCMP_ACT_ERRNO", None, vec![ne])],
    );
    let prog = compile(&p).unwrap();
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [8, 0, 0, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(run(&prog, AUDIT_ARCH, n, [9, 0, 0, 0, 0, 0]), eperm);
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [8 | 1 << 40, 0, 0, 0, 0, 0]),
        eperm
    );
    let masked = ArgCmp {
        index: 2,
        value: 0xF0,
        value_two: 0x30,
        op: CmpOp::MaskedEq,
    };
    let both = vec![
        masked,
        ArgCmp {
            index: 0,
            value: 1,
            value_two: 0,
            op: CmpOp::Eq,
        },
    ];
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![rule(&["personality"], "SCMP_ACT_KILL_PROCESS", None, both)],
    );
    let prog = compile(&p).unwrap();
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [1, 0, 0x3F, 0, 0, 0]),
        libc::SECCOMP_RET_KILL_PROCESS
    );
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [1, 0, 0x4F, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
    assert_eq!(
        run(&prog, AUDIT_ARCH, n, [2, 0, 0x3F, 0, 0, 0]),
        libc::SECCOMP_RET_ALLOW
    );
}

#[test]
fn unsupported_actions_and_comparisons_are_refused() {
    let p = profile("SCMP_ACT_NOTIFY", vec![]);
    assert!(compile(&p)
        .unwrap_err()
        .to_string()
        .contains("SCMP_ACT_NOTIFY"));
    assert!(cmp_op("SCMP_CMP_gt").is_err());
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![rule(&["read"], "SCMP_ACT_ERRNO", Some(5000), vec![])],
    );
    assert!(compile(&p).is_err());
}

/// Values around the 32-bit halves' boundaries, where a 64-bit comparison
/// split over two 32-bit loads goes wrong first.
const EDGES: [u64; 9] = [
    0,
    1,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0x1_0000_0001,
    0x2_0000_0000,
    0x1_FFFF_FFFF,
    u64::MAX - 1,
    u64::MAX,
];

/// A comparison's OCI name and what it means, in Rust.
type Meaning = (&'static str, fn(u64, u64) -> bool);

#[test]
fn ordered_comparisons_over_64_bits_match_rusts() {
    let ops: [Meaning; 7] = [
        ("SCMP_CMP_LT", |a, v| a < v),
        ("SCMP_CMP_LE", |a, v| a <= v),
        ("SCMP_CMP_GT", |a, v| a > v),
        ("SCMP_CMP_GE", |a, v| a >= v),
        ("SCMP_CMP_EQ", |a, v| a == v),
        ("SCMP_CMP_NE", |a, v| a != v),
        ("SCMP_CMP_MASKED_EQ", |a, v| a & v == v),
    ];
    let n = nr("personality");
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    for (name, holds) in ops {
        for v in EDGES {
            let cmp = ArgCmp {
                index: 3,
                value: v,
                value_two: v,
                op: cmp_op(name).unwrap(),
            };
            let p = profile(
                "SCMP_ACT_ALLOW",
                vec![rule(&["personality"], "SCMP_ACT_ERRNO", None, vec![cmp])],
            );
            let prog = compile(&p).unwrap();
            for a in EDGES {
                let want = if holds(a, v) {
                    eperm
                } else {
                    libc::SECCOMP_RET_ALLOW
                };
                let got = run(&prog, AUDIT_ARCH, n, [0, 0, 0, a, 0, 0]);
                assert_eq!(got, want, "{name}: arg {a:#x} against {v:#x}");
            }
        }
    }
}

#[test]
fn ordered_comparisons_combine_with_others_and_fall_through_to_later_rules() {
    // 16 <= arg1 < 32 and arg0 == 1 → EPERM; otherwise a later rule (ENOSYS) for arg0 == 1.
    let range = vec![
        ArgCmp {
            index: 1,
            value: 16,
            value_two: 0,
            op: CmpOp::Ge,
        },
        ArgCmp {
            index: 1,
            value: 32,
            value_two: 0,
            op: CmpOp::Lt,
        },
        ArgCmp {
            index: 0,
            value: 1,
            value_two: 0,
            op: CmpOp::Eq,
        },
    ];
    let later = vec![ArgCmp {
        index: 0,
        value: 1,
        value_two: 0,
        op: CmpOp::Eq,
    }];
    let p = profile(
        "SCMP_ACT_ALLOW",
        vec![
            rule(&["personality"], "SCMP_ACT_ERRNO", Some(1), range),
            rule(&["personality"], "SCMP_ACT_ERRNO", Some(38), later),
        ],
    );
    let prog = compile(&p).unwrap();
    let n = nr("personality");
    let errno = |e: u32| libc::SECCOMP_RET_ERRNO | e;
    for (arg0, arg1, want) in [
        (1, 16, errno(1)),
        (1, 31, errno(1)),
        (1, 15, errno(38)),
        (1, 32, errno(38)),
        (1, 16 | 1 << 32, errno(38)),
        (2, 20, libc::SECCOMP_RET_ALLOW),
    ] {
        let got = run(&prog, AUDIT_ARCH, n, [arg0, arg1, 0, 0, 0, 0]);
        assert_eq!(got, want, "arg0 {arg0} arg1 {arg1:#x}");
    }
    assert!(cmp_op("SCMP_CMP_BETWEEN").is_err());
}
