/**
 * `buildImage`: from a program, a pinned kernel and options to a bootable
 * UEFI disk image, entirely in userspace. Steps (build_steps.ts and below):
 * resolve the inputs, plan the root tree and the boot initramfs, skip if
 * nothing changed, add the code caches, write the read-only root image,
 * write the initramfs, write the disk (both slots: kernel, initramfs, root
 * image, and a loader entry carrying the root image's SHA-256).
 */
import {
  type InitramfsCompression,
  initramfsCompression,
  type InitramfsSizes,
  writeInitramfs,
} from "./initramfs/initramfs.ts";
import type { Rootfs } from "./initramfs/rootfs.ts";
import type { CpioEntry } from "./cpio.ts";
import { kernelCmdline } from "./cmdline.ts";
import { withBakedKernelArgs } from "./baked_kernel_args.ts";
import { type DiskLayout, writeDiskImage } from "./disk_image.ts";
import { guidFromSeed } from "./guid_from_seed.ts";
import { fingerprint } from "./fingerprint.ts";
import { createProgress, formatBytes, type Progress } from "./progress.ts";
import { addExtensions, type ExtensionImage, readExtensions } from "./extensions.ts";
import { type RootFsType, type RootImage, writeRootImage } from "./root_image.ts";
import { addCodeCaches, type BuildInputs, planTrees, resolveInputs } from "./build_steps.ts";
import type { SlotFiles } from "./esp/esp_writer.ts";
import { DEFAULT_MODULES, type KernelPin, SOURCE_DATE_EPOCH } from "./versions.ts";
import { type Arch, type ArchProfile, hostArch, PROFILES } from "./arch/profiles.ts";
import { type TargetInputs, targetInputs } from "./arch/target_inputs.ts";
import { type Board, BOARD_PROFILES, boardOptions, type BoardProfile } from "./rpi/board.ts";
import { boardFirmware } from "./rpi/firmware.ts";
import { defaultImageOut } from "./image_out.ts";
import { writePiDiskImage } from "./rpi/pi_disk.ts";

import type { ImageOptions } from "./image_options.ts";
import { resolveSecureBoot, type SecureBootSpec } from "./secure_boot/secure_esp.ts";

export type { ImageOptions };

/** What was built (or found current). */
export interface ImageResult {
  out: string;
  skipped: boolean;
  fingerprint: string;
  cmdline: string;
  imageBytes: bigint;
  initramfsPath: string;
  /** The slot's read-only root image (as built into both slots). */
  rootImagePath: string;
  /** The slot's kernel. */
  kernelPath: string;
  /** `image-version=` of the release record. */
  imageVersion: string;
  /** The architecture it was built for. */
  arch: Arch;
  /** The board it was built for, if any. */
  board?: Board;
  /** The system extensions in the root image (what a bundle's manifest lists). */
  extensions: ExtensionImage[];
  /** Each slot's signed UKI, when built with Secure Boot keys (what a UKI bundle carries). */
  ukiPaths?: { A: string; B: string };
  initramfs?: InitramfsSizes;
  rootImage?: RootImage;
  layout?: DiskLayout;
  seconds: number;
}

/** The image's disk size: the ESP plus room for STATE and EPHEMERAL (about 1.5 GiB). */
export const DEFAULT_DISK_SIZE = 2n << 30n;
/** The ESP's size: two slots of kernel (14 MiB), initramfs and root image (~70 MiB) fit. */
export const DEFAULT_ESP_SIZE = 512n << 20n;

/** lz4 -9 (HC) unpacks as fast as -1 and is ~15% smaller. */
const LZ4_LEVEL = 9;

/**
 * Where downloaded inputs (the pinned kernel package) are kept: per user and
 * outside the checkout, like cargo's or Deno's caches, so fresh clones and CI
 * reuse a download instead of fetching it again.
 */
export function defaultCacheDir(): string {
  const base = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache`;
  return `${base}/machined/imager`;
}

/** The resolved settings of one build. */
interface BuildContext {
  p: Progress;
  out: string;
  workDir: string;
  cacheDir: string;
  pin: KernelPin;
  profile: ArchProfile;
  board?: BoardProfile;
  /** `console=` of the kernel command line. */
  console: string;
  target: TargetInputs;
  deno: string;
  size: bigint;
  espSize: bigint;
  compression: InitramfsCompression;
  level: number;
  rootFs: RootFsType;
  /** Sign and enroll (`--secure-boot-keys`), resolved once the release record is known. */
  secureBoot?: SecureBootSpec;
}

/**
 * Build (or confirm current) the disk image described by `options`.
 * @throws CommandError from host tools, ModuleNotFoundError for an unknown
 *   module, TypeError for contradictory program options.
 */
export async function buildImage(given: ImageOptions = {}): Promise<ImageResult> {
  const board = given.board ? BOARD_PROFILES[given.board] : undefined;
  const options = board ? { ...given, ...boardOptions(board, given, DEFAULT_MODULES) } : given;
  const ctx = await buildContext(options, board);
  const inputs = await resolveInputs(ctx.p, options, ctx);
  const trees = await planTrees(ctx.p, inputs, options, ctx);
  const extensions = await readExtensions(options.extensions ?? []);
  addExtensions(trees.root, extensions);
  if (options.secureBootKeys) {
    ctx.secureBoot = await resolveSecureBoot(options.secureBootKeys, {
      arch: ctx.profile.arch,
      board: board?.board,
      release: inputs.release,
    });
  }
  const cmdline = await withBakedKernelArgs(
    kernelCmdline({
      program: inputs.program.kind,
      console: ctx.console,
      quiet: options.quietConsole,
      append: options.append,
    }),
    options.config,
  );
  const codeCache = (options.codeCache ?? inputs.machinedMain) && inputs.program.kind === "js";
  const print = await fingerprintBuild(ctx, trees, inputs, { codeCache, cmdline });
  const paths = {
    initramfs: `${ctx.workDir}/initramfs.img`,
    rootImage: `${ctx.workDir}/root.img`,
    stamp: `${ctx.out}.inputs`,
  };
  const result = {
    out: ctx.out,
    fingerprint: print,
    cmdline,
    imageBytes: ctx.size,
    initramfsPath: paths.initramfs,
    rootImagePath: paths.rootImage,
    kernelPath: inputs.kernel.vmlinuz,
    imageVersion: inputs.release["image-version"],
    arch: ctx.profile.arch,
    extensions,
    ...(board ? { board: board.board } : {}),
    // The signed UKIs the ESP writer leaves in the work directory (esp_writer.ts).
    ...(ctx.secureBoot
      ? { ukiPaths: { A: `${ctx.workDir}/machined-a.efi`, B: `${ctx.workDir}/machined-b.efi` } }
      : {}),
  };
  if (!options.force && await isCurrent(ctx, paths.stamp, print)) {
    return { ...result, skipped: true, seconds: ctx.p.elapsed() };
  }
  await Deno.remove(paths.stamp).catch(() => {});
  // The warmed caches derive from the program and Deno, both fingerprinted, so
  // they are added after the fingerprint (their bytes differ between builds).
  if (codeCache) await addCodeCaches(ctx.p, trees.root, inputs, ctx);
  const rootImage = await writeRoot(ctx, trees.root, paths.rootImage);
  const initramfs = await writeBootInitramfs(ctx, trees.initramfs, paths.initramfs);
  const layout = await writeDisk(ctx, inputs, {
    cmdline,
    print,
    rootImage,
    initramfs: paths.initramfs,
  });
  await Deno.writeTextFile(paths.stamp, print + "\n");
  await reportSizes(ctx, inputs, initramfs, rootImage);
  return { ...result, skipped: false, initramfs, rootImage, layout, seconds: ctx.p.elapsed() };
}

async function buildContext(options: ImageOptions, board?: BoardProfile): Promise<BuildContext> {
  const arch = options.arch ?? hostArch();
  const out = options.out ?? defaultImageOut(arch, hostArch());
  const compression = initramfsCompression({
    compression: options.compression,
    secureBoot: options.secureBootKeys !== undefined,
  });
  const profile = PROFILES[arch];
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  return {
    p: options.progress ?? createProgress(),
    out,
    workDir: `${dirname(out)}/work/${basename(out)}`,
    cacheDir,
    pin: options.kernel ?? profile.kernel,
    profile,
    board,
    console: board ? board.consoles.at(-1)! : profile.console,
    target: targetInputs(
      options.kernel ? { ...profile, kernel: options.kernel } : profile,
      cacheDir,
    ),
    deno: await Deno.realPath(options.deno ?? Deno.execPath()),
    size: options.size ?? DEFAULT_DISK_SIZE,
    espSize: options.espSize ?? DEFAULT_ESP_SIZE,
    compression,
    level: compression === "lz4" ? LZ4_LEVEL : options.zstdLevel ?? 9,
    rootFs: options.rootFs ?? "squashfs",
  };
}

/** The digest of every input (both trees, the parameters, kernel and loader). */
async function fingerprintBuild(
  ctx: BuildContext,
  trees: { root: Rootfs; initramfs: Rootfs },
  inputs: BuildInputs,
  more: { codeCache: boolean; cmdline: string },
): Promise<string> {
  const initramfsEntries: CpioEntry[] = trees.initramfs.entries().map((e) => ({
    ...e,
    path: `initramfs:${e.path}`,
  }));
  return await fingerprint([...trees.root.entries(), ...initramfsEntries], {
    ...more,
    size: ctx.size,
    espSize: ctx.espSize,
    compression: ctx.compression,
    level: ctx.level,
    rootFs: ctx.rootFs,
    pin: ctx.pin,
    arch: ctx.profile.arch,
    board: ctx.board ? { board: ctx.board.board, firmware: ctx.board.firmware } : undefined,
    epoch: SOURCE_DATE_EPOCH,
    // The owner's keys decide every signature and enrollment file.
    secureBoot: ctx.secureBoot
      ? { pk: ctx.secureBoot.pkCertPem, keys: ctx.secureBoot.keyDir }
      : undefined,
  }, [inputs.kernel.vmlinuz, inputs.loader]);
}

async function isCurrent(ctx: BuildContext, stamp: string, print: string): Promise<boolean> {
  const previous = await Deno.readTextFile(stamp).catch(() => "");
  if (previous.trim() !== print || !(await exists(ctx.out))) return false;
  ctx.p.note(`${ctx.out} is current (inputs ${print.slice(0, 12)}), not rebuilding`);
  return true;
}

/** Pack the root tree into the slot's read-only, hashed root image. */
function writeRoot(ctx: BuildContext, root: Rootfs, out: string): Promise<RootImage> {
  return ctx.p.step(
    `root image (${ctx.rootFs})`,
    () =>
      writeRootImage(root, out, {
        fstype: ctx.rootFs,
        mtime: SOURCE_DATE_EPOCH,
        workDir: `${ctx.workDir}/root-stage`,
      }),
    (r) =>
      `${formatBytes(r.contentBytes)} of files -> ${formatBytes(r.bytes)}, sha256 ${
        r.sha256.slice(0, 12)
      }`,
  );
}

/** Write the small boot initramfs (machined-init and the modules that reach the root). */
function writeBootInitramfs(
  ctx: BuildContext,
  tree: Rootfs,
  out: string,
): Promise<InitramfsSizes> {
  return ctx.p.step(
    `initramfs (${ctx.compression} -${ctx.level})`,
    () =>
      writeInitramfs(tree, out, {
        compression: ctx.compression,
        level: ctx.level,
        mtime: SOURCE_DATE_EPOCH,
      }),
    (s) => `${formatBytes(s.cpioBytes)} cpio -> ${formatBytes(s.compressedBytes)} compressed`,
  );
}

/** The GPT, the ESP and both slots, each with its loader entry naming the root image's hash. */
function writeDisk(
  ctx: BuildContext,
  inputs: BuildInputs,
  o: { cmdline: string; print: string; rootImage: RootImage; initramfs: string },
): Promise<DiskLayout> {
  const slot = {
    kernel: inputs.kernel.vmlinuz,
    initramfs: o.initramfs,
    root: {
      file: o.rootImage.path,
      sha256: o.rootImage.sha256,
      fstype: o.rootImage.fstype,
      verity: o.rootImage.verity,
    },
  };
  if (ctx.board) return writeBoardDisk(ctx, ctx.board, inputs, { ...o, slot });
  return ctx.p.step(
    "disk",
    async () =>
      writeDiskImage({
        out: ctx.out,
        size: ctx.size,
        espSize: ctx.espSize,
        diskGuid: await guidFromSeed(`machined-disk:${o.print}`),
        espGuid: await guidFromSeed(`machined-esp:${o.print}`),
        bootloader: { file: inputs.loader, name: ctx.profile.espLoaderName },
        slots: { A: slot, B: slot },
        defaultSlot: "A",
        cmdline: o.cmdline,
        sourceDateEpoch: SOURCE_DATE_EPOCH,
        workDir: ctx.workDir,
        secureBoot: ctx.secureBoot,
      }),
    (l) =>
      `GPT + ESP ${formatBytes(l.espSize)} at ${formatBytes(l.espOffset)}, ${
        formatBytes(l.free)
      } left free`,
  );
}

/** A board's SD-card image: the firmware's boot FAT with both slots (rpi/pi_disk.ts). */
function writeBoardDisk(
  ctx: BuildContext,
  board: BoardProfile,
  inputs: BuildInputs,
  o: { cmdline: string; print: string; slot: SlotFiles },
): Promise<DiskLayout> {
  // The kernel package's root: <root>/boot/vmlinuz-<release>.
  const kernelRoot = dirname(dirname(inputs.kernel.vmlinuz));
  return ctx.p.step(
    `disk (${board.board})`,
    async () =>
      writePiDiskImage({
        out: ctx.out,
        size: ctx.size,
        bootSize: ctx.espSize,
        diskGuid: await guidFromSeed(`machined-disk:${o.print}`),
        bootGuid: await guidFromSeed(`machined-esp:${o.print}`),
        firmware: await boardFirmware(board, ctx.cacheDir, kernelRoot),
        slots: { A: o.slot, B: o.slot },
        defaultSlot: "A",
        cmdline: o.cmdline,
        sourceDateEpoch: SOURCE_DATE_EPOCH,
        workDir: ctx.workDir,
      }),
    (l) =>
      `GPT + hybrid MBR, boot FAT ${formatBytes(l.espSize)} at ${formatBytes(l.espOffset)}, ${
        formatBytes(l.free)
      } left free`,
  );
}

async function reportSizes(
  ctx: BuildContext,
  inputs: BuildInputs,
  initramfs: InitramfsSizes,
  rootImage: RootImage,
): Promise<void> {
  const allocated = ((await Deno.stat(ctx.out)).blocks ?? 0) * 512;
  const kernel = (await Deno.stat(inputs.kernel.vmlinuz)).size;
  ctx.p.note(
    `${ctx.out}: ${formatBytes(ctx.size)} (${formatBytes(allocated)} allocated), initramfs ${
      formatBytes(initramfs.compressedBytes)
    }, root image ${formatBytes(rootImage.bytes)}, kernel ${formatBytes(kernel)}, total ${
      ctx.p.elapsed().toFixed(1)
    }s`,
  );
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
