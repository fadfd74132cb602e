//! Kernel modules and kexec: finit_module(2) with parameters (compressed
//! modules are handed to the kernel to decompress) and kexec_file_load(2).
//! modules.dep resolution and /proc/modules parsing live in TypeScript.

use std::fs::File;
use std::os::fd::AsRawFd;

use crate::error::{SysErr, SysResult};
use crate::util::{check_long, cstring};

/// MODULE_INIT_COMPRESSED_FILE: the kernel decompresses the module (Linux 6.4+).
const MODULE_INIT_COMPRESSED_FILE: libc::c_int = 4;
const KEXEC_FILE_UNLOAD: libc::c_ulong = 0x1;
const KEXEC_FILE_NO_INITRAMFS: libc::c_ulong = 0x4;

fn open(op: &str, path: &str) -> SysResult<File> {
    File::open(path).map_err(|e| SysErr::io(op, path, &e))
}

/// Whether a module load happened or the module was already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleLoad {
    Loaded,
    /// EEXIST: already loaded, which counts as success.
    AlreadyLoaded,
}

/// finit_module(2) on the file at `path` with `params` ("name=value ...").
pub fn load_module(path: &str, params: &str) -> SysResult<ModuleLoad> {
    let file = open("finit_module", path)?;
    let c_params = cstring("finit_module", params)?;
    let flags = if [".xz", ".zst", ".gz"].iter().any(|ext| path.ends_with(ext)) {
        MODULE_INIT_COMPRESSED_FILE
    } else {
        0
    };
    // SAFETY: valid fd and C string.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_finit_module,
            file.as_raw_fd(),
            c_params.as_ptr(),
            flags,
        )
    };
    match check_long("finit_module", path, ret) {
        Ok(_) => Ok(ModuleLoad::Loaded),
        Err(e) if e.errno == libc::EEXIST => Ok(ModuleLoad::AlreadyLoaded),
        Err(e) => Err(e),
    }
}

/// kexec_file_load(2): stage `kernel` (and `initramfs`) with `cmdline` for a
/// later reboot("kexec"). Loading does not reboot.
pub fn kexec_load(kernel: &str, initramfs: Option<&str>, cmdline: &str) -> SysResult<()> {
    let kernel_file = open("kexec_file_load", kernel)?;
    let initrd = initramfs.map(|p| open("kexec_file_load", p)).transpose()?;
    let c_cmdline = cstring("kexec_file_load", cmdline)?;
    let mut flags = 0;
    let initrd_fd = match &initrd {
        Some(f) => f.as_raw_fd(),
        None => {
            flags |= KEXEC_FILE_NO_INITRAMFS;
            -1
        }
    };
    let len = c_cmdline.as_bytes_with_nul().len();
    // SAFETY: valid fds, C string and its length including the NUL.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            kernel_file.as_raw_fd(),
            initrd_fd,
            len,
            c_cmdline.as_ptr(),
            flags,
        )
    };
    check_long("kexec_file_load", kernel, ret).map(|_| ())
}

/// Drop a staged kexec image.
pub fn kexec_unload() -> SysResult<()> {
    // SAFETY: unload ignores the fds and the command line.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_kexec_file_load,
            -1,
            -1,
            0,
            std::ptr::null::<u8>(),
            KEXEC_FILE_UNLOAD,
        )
    };
    check_long("kexec_file_load", "unload", ret).map(|_| ())
}

pub mod js {
    use napi_derive::napi;

    use crate::util::blocking;

    /// finit_module(2); resolves `"loaded"` or `"already-loaded"` (EEXIST).
    #[napi]
    pub async fn load_module(path: String, params: String) -> napi::Result<String> {
        blocking("finit_module", move || {
            super::load_module(&path, &params).map(|l| match l {
                super::ModuleLoad::Loaded => "loaded".to_string(),
                super::ModuleLoad::AlreadyLoaded => "already-loaded".to_string(),
            })
        })
        .await
    }

    /// kexec_file_load(2); stages an image, does not reboot.
    #[napi]
    pub async fn kexec_load(
        kernel: String,
        initramfs: Option<String>,
        cmdline: String,
    ) -> napi::Result<()> {
        blocking("kexec_file_load", move || {
            super::kexec_load(&kernel, initramfs.as_deref(), &cmdline)
        })
        .await
    }

    /// Unload a staged kexec image.
    #[napi]
    pub async fn kexec_unload() -> napi::Result<()> {
        blocking("kexec_file_load", super::kexec_unload).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_module_is_enoent() {
        let e = load_module("/nonexistent/foo.ko", "").unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("finit_module", libc::ENOENT));
    }

    #[test]
    fn missing_kernel_is_enoent() {
        let e = kexec_load("/nonexistent/vmlinuz", None, "").unwrap_err();
        assert_eq!((e.op.as_str(), e.errno), ("kexec_file_load", libc::ENOENT));
    }
}
