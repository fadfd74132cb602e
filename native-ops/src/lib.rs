//! machined-native-ops: the only code in machined that makes privileged syscalls.
//!
//! Plain-Rust modules do the work and carry cargo tests; the `#[napi]` functions
//! are thin wrappers (each domain's `js` module). Anything that can block runs
//! on a worker thread and returns a Promise to TypeScript. Errors follow
//! `error.rs`. See docs/native-ops.md.

pub mod block;
pub mod error;
pub mod fs_usage;
pub mod napi_block;
pub mod napi_link_kind;
pub mod napi_netlink;
pub mod napi_uevent;
pub mod netlink;
pub mod uevent;
pub mod util;

pub mod clock;
pub mod identity;
pub mod kmod;
pub mod kmsg;
pub mod malloc_heap;
pub mod mount;
pub mod page_out;
pub mod power;
pub mod process;
pub mod watchdog;

use napi_derive::napi;

/// The crate version, so TypeScript can check it loaded the addon it expects.
#[napi]
pub fn native_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
