/**
 * The imager: builds a bootable x86_64 UEFI disk image for machined entirely
 * in userspace (GPT by platform/block's shared encoder, FAT32 ESP via
 * dosfstools/mtools, systemd-boot, A/B slots each with the pinned Debian cloud kernel and an lz4 (or zstd) cpio
 * initramfs holding Deno and the program PID 1 runs), and runs it under QEMU.
 *
 * @example
 * ```ts
 * import { buildImage, startVm } from "./imager/mod.ts";
 * const image = await buildImage({ program: "imager/testdata/init_probe.ts", out: "build/probe.img" });
 * const vm = await startVm({ image: image.out, accel: "tcg", hostPort: 50000, snapshot: true });
 * await vm.waitForConsole(/INIT_PROBE_READY pid=1/);
 * await vm.stop();
 * ```
 * @module
 */
export { buildImage, defaultCacheDir, type ImageOptions, type ImageResult } from "./build_image.ts";
export { type CpioEntry, writeCpio } from "./cpio.ts";
export { fetchKernel } from "./kernel/kernel_fetch.ts";
export { loadModuleIndex } from "./kernel/module_index.ts";
export { resolveModuleClosure } from "./kernel/module_closure.ts";
export {
  API_READY,
  type BootMemory,
  bootMemory,
  type BootPhases,
  bootPhases,
  FAIL,
  FIRST_SERVED,
  FOOTPRINT,
  INIT_START,
  MACHINED_MAIN,
  MACHINED_START,
  PAGE_OUT,
  ROOT_MOUNTED,
  RSS,
} from "./boot_console.ts";
export {
  attachVm,
  startVm,
  type Vm,
  VmFailedError,
  type VmOptions,
  type VmState,
  VmTimeoutError,
} from "./qemu/vm.ts";
export { type ExtraFile, LAYOUT, type ProgramInput } from "./initramfs/initramfs.ts";
export { kernelCmdline } from "./cmdline.ts";
export { DEFAULT_MODULES, KERNEL, type KernelPin } from "./versions.ts";
export { readImageGpt } from "../layout/mod.ts";
export { CommandError } from "./run.ts";
export { PROFILES } from "./arch/profiles.ts";
export { warmDenoDir } from "./code_cache.ts";
export { bundleCompatible, writeImageBundle } from "./image_bundle.ts";
export {
  type ExtensionImage,
  type ExtensionSource,
  parseExtensionArg,
  readExtensions,
} from "./extensions.ts";
export { sharedLibraries } from "./initramfs/rootfs.ts";
export { ensureNodeBundle } from "./node_bundle.ts";
export { bundleProgram } from "./program.ts";
export { connectQmp } from "./qemu/qmp.ts";
export { startRaspiVm } from "./qemu/raspi_vm.ts";
export { createTapNetwork, DNSMASQ_PATHS } from "./qemu/tap_network.ts";
export type { TapNetwork } from "./qemu/tap_network.ts";
export { isRunning } from "./qemu/vm.ts";
export { sha256File } from "./root_image.ts";
export { BOARD_PROFILES, boardOptions, parseBoard } from "./rpi/board.ts";
export { onPath, run } from "./run.ts";
export { buildUki, type UkiParts } from "./uki/uki.ts";
export { sourceRevisionOf } from "./source_revision.ts";
export { UP_FAIL, upNode, waitForApi } from "./up.ts";
export { UP_INSTALL_DISK, UP_PAYLOAD_ID } from "./up_config.ts";
