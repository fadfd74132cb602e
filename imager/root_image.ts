/**
 * The slot's read-only root image: the planned tree (a {@link Rootfs}) staged
 * as a directory and packed by `mksquashfs` (Debian squashfs-tools), or by
 * `mkfs.erofs` (erofs-utils) for comparison. Userspace only: no mount, no
 * root. Reproducible: every entry's mode and owner come from the plan through
 * a pseudo file (not from the staging directory, which belongs to whoever
 * builds), every timestamp is SOURCE_DATE_EPOCH, xattrs are left out and
 * mksquashfs reads directories in sorted order. A squashfs gets a dm-verity
 * hash tree appended (verity_tree.ts): machined-init mounts it through
 * dm-verity, the kernel checking each block as it is read. The whole file's
 * SHA-256 (tree included) stays on the loader entry: bundles, upgrades and
 * installs check copies with it, and machined-init hashes the file up front
 * when the entry has no verity word.
 */
import type { CpioEntry } from "./cpio.ts";
import type { Rootfs } from "./initramfs/rootfs.ts";
import { run } from "./run.ts";
import { appendVerityTree } from "./verity_tree.ts";
import type { SlotVerity } from "../layout/mod.ts";

/** The root image's file system. */
export type RootFsType = "squashfs" | "erofs";

/** What {@link writeRootImage} wrote. */
export interface RootImage {
  path: string;
  fstype: RootFsType;
  bytes: number;
  /** Lowercase hex SHA-256 of the whole file (what the loader entry carries). */
  sha256: string;
  /** Bytes of the files it holds, uncompressed. */
  contentBytes: number;
  /** The appended dm-verity tree's parameters (squashfs only). */
  verity?: SlotVerity;
}

/** Options of {@link writeRootImage}. */
export interface RootImageOptions {
  fstype?: RootFsType;
  /** Timestamp of every inode and of the file system. */
  mtime: number;
  /** Scratch directory (emptied) for the staged tree and the pseudo file. */
  workDir: string;
}

/**
 * The mksquashfs command line: lz4 high-compression, 128 KiB blocks (the
 * 180 MiB tree → 81 MiB). zstd-3 is smaller (72 MiB) but every page the node
 * reads is decompressed under TCG too, and booted alternately the lz4 image
 * reached the API in 0.60–0.75× the zstd image's time (docs/decisions.md).
 * The kernel only decompresses the blocks that are read. Pure.
 */
export function mksquashfsArgs(
  stage: string,
  out: string,
  pseudo: string,
  mtime: number,
): string[] {
  return [
    stage,
    out,
    "-noappend",
    "-no-xattrs",
    "-comp",
    "lz4",
    "-Xhc",
    "-b",
    "128K",
    "-all-time",
    String(mtime),
    "-mkfs-time",
    String(mtime),
    "-root-mode",
    "755",
    "-root-uid",
    "0",
    "-root-gid",
    "0",
    "-pf",
    pseudo,
    "-quiet",
    "-no-progress",
  ];
}

/**
 * Stage `fs` under `opts.workDir` and pack it into `out`.
 * @throws CommandError when mksquashfs or mkfs.erofs fails.
 */
export async function writeRootImage(
  fs: Rootfs,
  out: string,
  opts: RootImageOptions,
): Promise<RootImage> {
  const fstype = opts.fstype ?? "squashfs";
  const stage = `${opts.workDir}/root`;
  await Deno.remove(opts.workDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(stage, { recursive: true });
  const entries = sortedForStaging(fs.entries());
  const contentBytes = await stageTree(entries, stage);
  await Deno.remove(out).catch(() => {});
  await Deno.remove(veritySidecar(out)).catch(() => {});
  let verity: SlotVerity | undefined;
  if (fstype === "squashfs") {
    const pseudo = `${opts.workDir}/pseudo`;
    await Deno.writeTextFile(pseudo, pseudoFile(entries));
    // mksquashfs refuses SOURCE_DATE_EPOCH together with -all-time: the flags pin the times.
    await run("mksquashfs", mksquashfsArgs(stage, out, pseudo, opts.mtime));
    verity = await appendVerityTree(out);
    await Deno.writeTextFile(veritySidecar(out), JSON.stringify(verity) + "\n");
  } else {
    await chownStage(entries, stage);
    await run("mkfs.erofs", [
      "-zlz4hc",
      `-T${opts.mtime}`,
      "-U",
      "6d616368-696e-6564-2d72-6f6f74000000",
      "-x-1",
      "--quiet",
      out,
      stage,
    ], { env: { SOURCE_DATE_EPOCH: String(opts.mtime) } });
  }
  return {
    path: out,
    fstype,
    bytes: (await Deno.stat(out)).size,
    sha256: await sha256File(out),
    contentBytes,
    verity,
  };
}

/**
 * One `path m mode uid gid` line per directory and file: mksquashfs then
 * takes modes and owners from the plan, not from the staging directory.
 * Pure.
 */
export function pseudoFile(entries: readonly CpioEntry[]): string {
  const lines: string[] = [];
  for (const e of entries) {
    if (e.path === "/" || (e.type !== "dir" && e.type !== "file")) continue;
    const mode = (e.mode ?? (e.type === "dir" ? 0o755 : 0o644)).toString(8);
    lines.push(`${quote(e.path)} m ${mode} ${e.uid ?? 0} ${e.gid ?? 0}`);
  }
  return lines.join("\n") + "\n";
}

function quote(path: string): string {
  if (/[\s"\\]/.test(path)) throw new TypeError(`Root image path "${path}" needs quoting`);
  return path;
}

/** Parents before children; device nodes are left out (devtmpfs provides /dev). */
function sortedForStaging(entries: CpioEntry[]): CpioEntry[] {
  return entries.filter((e) => e.type !== "chardev").sort((a, b) => (a.path < b.path ? -1 : 1));
}

async function stageTree(entries: CpioEntry[], stage: string): Promise<number> {
  let bytes = 0;
  for (const e of entries) {
    const at = stage + e.path;
    if (e.type === "dir") {
      await Deno.mkdir(at, { recursive: true });
      await Deno.chmod(at, e.mode ?? 0o755);
    } else if (e.type === "symlink") {
      await Deno.symlink(e.target, at);
    } else if (e.type === "file") {
      if (e.data) await Deno.writeFile(at, e.data);
      else await Deno.copyFile(e.source!, at);
      await Deno.chmod(at, e.mode ?? 0o644);
      bytes += (await Deno.stat(at)).size;
    }
  }
  return bytes;
}

/** mkfs.erofs has no pseudo files: owners come from the stage (needs root for non-root owners). */
async function chownStage(entries: CpioEntry[], stage: string): Promise<void> {
  if (Deno.uid() !== 0) return;
  for (const e of entries) {
    if (e.type === "dir" || e.type === "file") {
      await Deno.chown(stage + e.path, e.uid ?? 0, e.gid ?? 0);
    }
  }
  await Deno.chown(stage, 0, 0);
}

/** Streamed SHA-256 of a file, lowercase hex (sha256sum, not held in memory). */
export async function sha256File(path: string): Promise<string> {
  const out = await run("sha256sum", [path]);
  return out.trim().split(/\s+/)[0];
}

function veritySidecar(image: string): string {
  return `${image}.verity.json`;
}

/**
 * The verity parameters {@link writeRootImage} recorded beside `image`, or
 * undefined (an erofs image, or one built before the trees): what a bundle
 * written from a build that was current (not rebuilt) needs.
 */
export async function readRootVerity(image: string): Promise<SlotVerity | undefined> {
  const text = await Deno.readTextFile(veritySidecar(image)).catch(() => undefined);
  return text === undefined ? undefined : JSON.parse(text) as SlotVerity;
}
