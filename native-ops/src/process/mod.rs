//! Supervised processes: spawn (fork + exec with credentials, session, cgroup,
//! piped output and a sandbox: a seccomp filter and the capabilities kept),
//! one reaper thread that owns waitid for the whole process, an output pump
//! thread, and the hub TypeScript long-polls for exits and output. See docs/native-ops.md for the design.

pub mod caps;
pub mod hub;
pub mod js;
pub mod mounts;
pub mod oci;
pub mod pump;
pub mod reaper;
pub mod seccomp;
pub mod spawn;
pub mod syscall_table;
