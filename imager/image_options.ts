/**
 * The options of an image build, apart from buildImage so the build steps take them
 * without importing the builder back.
 */
import type { ExtraFile, InitramfsCompression } from "./initramfs/initramfs.ts";
import type { Progress } from "./progress.ts";
import type { ExtensionSource } from "./extensions.ts";
import type { RootFsType } from "./root_image.ts";
import type { KernelPin } from "./versions.ts";
import type { Arch } from "./arch/profiles.ts";
import type { Board } from "./rpi/board.ts";

/** Options of {@link buildImage}; every field has a default. */
export interface ImageOptions {
  /**
   * The node's architecture; a foreign one takes its kernel, loader, libraries
   * and node binaries from its Debian packages, Deno from npm and the Rust
   * code from native-ops/cross (arch/target_inputs.ts). @default the build host's
   */
  arch?: Arch;
  /**
   * A board image instead of a UEFI one (rpi3: an SD card for the Raspberry
   * Pi 3's firmware, rpi/). Fixes the architecture, kernel, console and boot
   * modules. @default none
   */
  board?: Board;
  /** @default "build/machined.img" (build/machined-<arch>.img for a foreign arch) */
  out?: string;
  /** TS/JS entry or directory for Deno to run as PID 1. @default "main.ts" */
  program?: string;
  /** A compiled executable to run as PID 1 instead of a Deno program. */
  binary?: string;
  /**
   * Ship machined-edge (the API's network edge, native-ops/edge) at
   * /machined/bin/machined-edge, built for the image's architecture.
   * @default true when `program` is machined's main.ts, else false
   */
  edge?: boolean;
  /**
   * Ship Deno caches warmed at build time (V8 code cache, dependency
   * analysis) for the program, at the DENO_DIR it runs with
   * (see code_cache.ts); reproducible like the rest of the image. Warming
   * imports the program on the build host, so only a program whose top level
   * has no side effects may use it (machined's main.ts guards on
   * `import.meta.main`, its start line on PID 1; a stand-in init that mounts
   * and serves must not).
   * @default true for machined's main.ts, false for any other program; always
   *   false for a foreign architecture (the build host cannot run its Deno)
   */
  codeCache?: boolean;

  /**
   * The image's version, written to /etc/machined/release as `image-version=`
   * (reported by Version) and named by an upgrade bundle's manifest.
   * @default the source revision's first 12 digits
   */
  imageVersion?: string;
  /** Machine config baked in at /etc/machined/config.yaml. */
  config?: string;
  /** PKI directory baked in at /etc/machined/pki. */
  pki?: string;
  /** Disk size in bytes. @default 2 GiB */
  size?: bigint;
  /** ESP size in bytes. @default 512 MiB */
  espSize?: bigint;
  /** Extra kernel arguments. */
  append?: string;
  /**
   * A directory of Secure Boot keys (`machinectl gen secureboot-keys`): sign
   * the loader and boot each slot from a signed Unified Kernel Image, with the
   * keys enrolled on the first boot (docs/secure-boot.md). x86_64 UEFI only.
   */
  secureBootKeys?: string;
  /** `quiet loglevel=3` on the kernel command line. @default false */
  quietConsole?: boolean;
  /**
   * Initramfs compression: lz4 boots faster (the kernel unpacks it about
   * twice as fast), zstd is smaller. @default "lz4"
   */
  compression?: InitramfsCompression;
  /** zstd's level. @default 9 (19 saves ~5 MiB and costs over a minute) */
  zstdLevel?: number;
  /** The read-only root image's file system (docs/decisions.md). @default "squashfs" */
  rootFs?: RootFsType;
  /** Modules PID 1 loads at boot (their closure is shipped). @default DEFAULT_MODULES */
  modules?: readonly string[];
  /** Modules machined-init loads to reach the root image. @default BOOT_MODULES (or the board's) */
  bootModules?: readonly string[];
  /**
   * Modules shipped with their dependencies (and listed in modules.dep) but not
   * loaded at boot: for `machine.kernel.modules` to load when the config asks.
   * @default []
   */
  onDemandModules?: readonly string[];
  extraFiles?: ExtraFile[];
  /**
   * System extensions shipped in the root image and mounted read-only on
   * `/opt/extensions/<name>` (extensions.ts). @default []
   */
  extensions?: ExtensionSource[];
  /** Ship containerd, runc and mkfs.ext4 from the host (see node_extras.ts). @default true */
  nodeExtras?: boolean;
  /** Host Deno binary to ship. @default Deno.execPath() */
  deno?: string;
  /** The addon to ship; "auto" ships native-ops/machined_native_ops.node when built. @default "auto" */
  nativeAddon?: string | "auto" | "none";
  /** Downloaded inputs (the kernel package). @default ~/.cache/machined/imager (see defaultCacheDir) */
  cacheDir?: string;
  /** @default the architecture's pinned kernel (arch/profiles.ts) */
  kernel?: KernelPin;
  /** Rebuild even when the inputs are unchanged. @default false */
  force?: boolean;
  progress?: Progress;
}
