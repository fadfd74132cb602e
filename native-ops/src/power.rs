//! reboot(2) and sync(2): restart, power off, halt, boot a loaded kexec
//! image, and switch Ctrl-Alt-Del between "reboot now" and "send SIGINT to PID 1".

use crate::error::{SysErr, SysResult};
use crate::util::check;

/// What reboot(2) is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCmd {
    Restart,
    PowerOff,
    Halt,
    Kexec,
    /// Ctrl-Alt-Del sends SIGINT to PID 1 instead of rebooting at once.
    CadOff,
    /// Ctrl-Alt-Del reboots immediately (the kernel default).
    CadOn,
}

impl PowerCmd {
    /// Parse the TypeScript spelling.
    pub fn parse(name: &str) -> SysResult<Self> {
        Ok(match name {
            "restart" => Self::Restart,
            "poweroff" => Self::PowerOff,
            "halt" => Self::Halt,
            "kexec" => Self::Kexec,
            "cad_off" => Self::CadOff,
            "cad_on" => Self::CadOn,
            other => {
                return Err(SysErr::new(
                    "reboot",
                    libc::EINVAL,
                    format!("unknown command {other:?}"),
                ))
            }
        })
    }

    fn raw(self) -> libc::c_int {
        match self {
            Self::Restart => libc::LINUX_REBOOT_CMD_RESTART,
            Self::PowerOff => libc::LINUX_REBOOT_CMD_POWER_OFF,
            Self::Halt => libc::LINUX_REBOOT_CMD_HALT,
            Self::Kexec => libc::LINUX_REBOOT_CMD_KEXEC,
            Self::CadOff => libc::LINUX_REBOOT_CMD_CAD_OFF,
            Self::CadOn => libc::LINUX_REBOOT_CMD_CAD_ON,
        }
    }

    /// Whether the command ends the running kernel (and so wants a sync first).
    pub fn ends_system(self) -> bool {
        !matches!(self, Self::CadOff | Self::CadOn)
    }
}

/// sync(2): flush every filesystem. Never fails.
pub fn sync() {
    // SAFETY: no arguments.
    unsafe { libc::sync() };
}

/// reboot(2). Commands that end the system sync first and return only on
/// failure. In a child PID namespace the kernel instead kills that
/// namespace's init (SIGHUP for restart, SIGINT for power-off) and rejects
/// the Ctrl-Alt-Del commands with EINVAL; tests rely on this.
pub fn reboot(cmd: PowerCmd) -> SysResult<()> {
    if cmd.ends_system() {
        sync();
    }
    // SAFETY: plain syscall with a valid command constant.
    let ret = unsafe { libc::reboot(cmd.raw()) };
    check("reboot", &format!("{cmd:?}"), ret).map(|_| ())
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// reboot(2): `"restart" | "poweroff" | "halt" | "kexec" | "cad_off" | "cad_on"`.
    #[napi]
    pub async fn reboot(cmd: String) -> napi::Result<()> {
        blocking("reboot", move || {
            super::reboot(super::PowerCmd::parse(&cmd)?)
        })
        .await
    }

    /// sync(2) off the JavaScript thread (it can take seconds).
    #[napi]
    pub async fn sync() -> napi::Result<()> {
        blocking("sync", || {
            super::sync();
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands() {
        assert_eq!(PowerCmd::parse("cad_off").unwrap(), PowerCmd::CadOff);
        assert!(!PowerCmd::CadOff.ends_system());
        assert!(PowerCmd::Kexec.ends_system());
        assert_eq!(PowerCmd::parse("explode").unwrap_err().errno, libc::EINVAL);
    }
}
