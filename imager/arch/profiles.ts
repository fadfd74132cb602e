/**
 * Everything that differs between the architectures the imager builds for,
 * in one typed table: the pinned kernel, systemd-boot's EFI binary and the
 * name the firmware looks for, the serial console, the loader's library
 * path, the target's Debian packages, Deno's npm package, the Rust target
 * and the QEMU machine. The rest of the imager takes an {@link ArchProfile}
 * and never asks which architecture it is.
 */
import type { KernelPin } from "../versions.ts";
import { KERNEL, OVMF_CODE, OVMF_VARS, SYSTEMD_BOOT_EFI } from "../versions.ts";
import { ELF_MACHINE } from "../../native-ops/cross/mod.ts";

/** The architectures an image can be built for (Debian's names). */
export type Arch = "amd64" | "arm64";

/** Every {@link Arch}, for argument parsing and messages. */
export const ARCHES: readonly Arch[] = ["amd64", "arm64"];

/** A Debian package pinned to an exact version. */
export interface DebPin {
  package: string;
  version: string;
}

/** How QEMU boots an image of this architecture. */
export interface QemuProfile {
  /** The emulator binary (Debian qemu-system-x86 / qemu-system-arm). */
  binary: string;
  /** Machine and CPU arguments. */
  machine: readonly string[];
  /** UEFI firmware code (read-only) and the variable store template (copied per VM). */
  firmwareCode: string;
  firmwareVars: string;
  /** Host packages that provide the above. */
  hostPackages: readonly string[];
  /**
   * QEMU's user-mode emulator (Debian qemu-user), which runs the target's
   * Deno on the build host to warm its code cache; none for the host's own.
   */
  user?: string;
}

/** One architecture's inputs. */
export interface ArchProfile {
  arch: Arch;
  /** ELF `e_machine` every shipped binary must have. */
  elfMachine: number;
  /** Rust's target triple for native-ops and machined-init. */
  rustTarget: string;
  kernel: KernelPin;
  /** systemd-boot's EFI binary, inside the package (and so on the host for amd64). */
  loader: string;
  /** The removable-media name UEFI firmware starts: EFI/BOOT/<name>. */
  espLoaderName: string;
  /** `console=` for the kernel (the first UART QEMU's machine has). */
  console: string;
  /** The dynamic loader's search path (Debian multiarch). */
  libDirs: readonly string[];
  /**
   * Target packages unpacked into the sysroot a foreign build reads (libc,
   * containerd, runc, e2fsprogs, nftables and their libraries, systemd-boot). Empty
   * for the build host's own architecture, which uses the host's files.
   */
  packages: readonly DebPin[];
  /** Deno's npm package for this architecture (the `deno` package's optional dependency). */
  denoNpm: string;
  qemu: QemuProfile;
}

const AMD64: ArchProfile = {
  arch: "amd64",
  elfMachine: ELF_MACHINE.x86_64,
  rustTarget: "x86_64-unknown-linux-gnu",
  kernel: KERNEL,
  loader: SYSTEMD_BOOT_EFI,
  espLoaderName: "BOOTX64.EFI",
  console: "ttyS0,115200",
  libDirs: ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib", "/usr/lib"],
  packages: [],
  denoNpm: "@deno/linux-x64-glibc",
  qemu: {
    binary: "qemu-system-x86_64",
    machine: ["-machine", "q35"],
    firmwareCode: OVMF_CODE,
    firmwareVars: OVMF_VARS,
    hostPackages: ["qemu-system-x86", "ovmf"],
  },
};

/** bookworm's arm64 packages, the same versions as the amd64 host's where both exist. */
const ARM64_PACKAGES: readonly DebPin[] = [
  { package: "libc6", version: "2.36-9+deb12u14" },
  { package: "libgcc-s1", version: "12.2.0-14+deb12u1" },
  { package: "libseccomp2", version: "2.5.4-1+deb12u1" },
  { package: "containerd", version: "1.6.20~ds1-1+deb12u3" },
  { package: "runc", version: "1.1.5+ds1-1+deb12u1" },
  { package: "e2fsprogs", version: "1.47.0-2+b2" },
  { package: "libext2fs2", version: "1.47.0-2+b2" },
  { package: "libcom-err2", version: "1.47.0-2+b2" },
  { package: "libss2", version: "1.47.0-2+b2" },
  { package: "libblkid1", version: "2.38.1-5+deb12u3" },
  { package: "libuuid1", version: "2.38.1-5+deb12u3" },
  // nft (the ingress firewall, imager/node_extras.ts) and the libraries ldd lists for it
  { package: "nftables", version: "1.0.6-2+deb12u2" },
  { package: "libnftables1", version: "1.0.6-2+deb12u2" },
  { package: "libnftnl11", version: "1.2.4-2" },
  { package: "libmnl0", version: "1.0.4-3" },
  { package: "libxtables12", version: "1.8.9-2" },
  { package: "libjansson4", version: "2.14-2" },
  { package: "libgmp10", version: "2:6.2.1+dfsg1-1.1" },
  { package: "libedit2", version: "3.1-20221030-2" },
  { package: "libtinfo6", version: "6.4-4" },
  { package: "libbsd0", version: "0.11.7-2" },
  { package: "libmd0", version: "1.0.4-2" },
  // cryptsetup (encrypted STATE and EPHEMERAL, platform/crypt) and the libraries ldd lists for it.
  { package: "cryptsetup-bin", version: "2:2.6.1-4~deb12u2" },
  { package: "libcryptsetup12", version: "2:2.6.1-4~deb12u2" },
  { package: "libargon2-1", version: "0~20171227-0.3+deb12u1" },
  { package: "libdevmapper1.02.1", version: "2:1.02.185-2" },
  { package: "libjson-c5", version: "0.16-2" },
  { package: "libpcre2-8-0", version: "10.42-1" },
  { package: "libpopt0", version: "1.19+dfsg-1" },
  { package: "libselinux1", version: "3.4-1+b6" },
  { package: "libssl3", version: "3.0.22-1~deb12u2" },
  { package: "libudev1", version: "252.39-1~deb12u2" },
  { package: "systemd-boot-efi", version: "252.39-1~deb12u2" },
  // wg (WireGuard keys and peers, platform/wireguard): libc only.
  { package: "wireguard-tools", version: "1.0.20210914-1+b1" },
];

const ARM64: ArchProfile = {
  arch: "arm64",
  elfMachine: ELF_MACHINE.aarch64,
  rustTarget: "aarch64-unknown-linux-gnu",
  kernel: {
    package: "linux-image-6.1.0-57-cloud-arm64",
    version: "6.1.192-3",
    release: "6.1.0-57-cloud-arm64",
  },
  loader: "/usr/lib/systemd/boot/efi/systemd-bootaa64.efi",
  espLoaderName: "BOOTAA64.EFI",
  console: "ttyAMA0,115200",
  libDirs: ["/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"],
  packages: ARM64_PACKAGES,
  denoNpm: "@deno/linux-arm64-glibc",
  qemu: {
    binary: "qemu-system-aarch64",
    // cortex-a72 is a real core the cloud kernel supports; `max` enables
    // every feature TCG emulates, which costs time on an x86 host.
    machine: ["-machine", "virt", "-cpu", "cortex-a72"],
    firmwareCode: "/usr/share/AAVMF/AAVMF_CODE.fd",
    firmwareVars: "/usr/share/AAVMF/AAVMF_VARS.fd",
    hostPackages: ["qemu-system-arm", "qemu-efi-aarch64"],
    user: "/usr/bin/qemu-aarch64",
  },
};

/** The profile of each architecture. */
export const PROFILES: Readonly<Record<Arch, ArchProfile>> = { amd64: AMD64, arm64: ARM64 };

/** The build host's architecture. */
export function hostArch(): Arch {
  return Deno.build.arch === "aarch64" ? "arm64" : "amd64";
}

/** Parse an `--arch` value (Debian's or Rust's/uname's spelling). */
export function parseArch(value: string): Arch {
  const aliases: Record<string, Arch> = {
    amd64: "amd64",
    x86_64: "amd64",
    arm64: "arm64",
    aarch64: "arm64",
  };
  const arch = aliases[value];
  if (!arch) throw new TypeError(`Unknown architecture "${value}" (one of ${ARCHES.join(", ")})`);
  return arch;
}
