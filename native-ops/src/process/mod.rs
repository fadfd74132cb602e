//! Supervised processes: spawn (fork + exec with credentials, session, cgroup
//! and piped output), one reaper thread that owns waitid for the whole
//! process, an output pump thread, and the hub TypeScript long-polls for
//! exits and output. See docs/native-ops.md for the design.

pub mod hub;
pub mod js;
pub mod pump;
pub mod reaper;
pub mod spawn;
