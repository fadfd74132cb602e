//! One error convention for every binding: a failed syscall becomes a napi
//! error whose reason is `SYS:<errno>:<op>:<detail>`, which `native-ops/mod.ts`
//! turns back into a typed `SysError` (errno, code, op). Never panic across the
//! FFI boundary: a panic would abort PID 1.

/// A failed operation with the errno that caused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysErr {
    pub op: String,
    pub errno: i32,
    pub detail: String,
}

impl SysErr {
    /// Capture `errno` right after a failed libc call.
    pub fn last(op: impl Into<String>, detail: impl Into<String>) -> Self {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        Self {
            op: op.into(),
            errno,
            detail: detail.into(),
        }
    }

    /// An error with an explicit errno (for example from a netlink NLMSG_ERROR).
    pub fn new(op: impl Into<String>, errno: i32, detail: impl Into<String>) -> Self {
        Self {
            op: op.into(),
            errno,
            detail: detail.into(),
        }
    }

    /// From a std::io::Error, keeping its errno when it has one (EIO otherwise).
    pub fn io(op: impl Into<String>, detail: impl Into<String>, e: &std::io::Error) -> Self {
        Self {
            op: op.into(),
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for SysErr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SYS:{}:{}:{}", self.errno, self.op, self.detail)
    }
}

impl std::error::Error for SysErr {}

impl From<SysErr> for napi::Error {
    fn from(e: SysErr) -> Self {
        napi::Error::new(napi::Status::GenericFailure, e.to_string())
    }
}

/// Result type used by the plain-Rust modules.
pub type SysResult<T> = Result<T, SysErr>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_for_typescript() {
        let e = SysErr::new("mount", libc::EPERM, "/mnt");
        assert_eq!(e.to_string(), "SYS:1:mount:/mnt");
    }
}
