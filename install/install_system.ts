/**
 * Install to disk, the writes: copy the boot medium's ESP (systemd-boot,
 * loader config, both slot directories with kernel, initramfs and root image)
 * byte for byte to the install disk at 1 MiB, write the new GPT the decision
 * planned (imager/disk_image.ts's planDisk, so the same layout as an image),
 * make the kernel read it, then mount both ESPs read-only and check every
 * copied file's SHA-256 against the boot medium's (each root image against
 * the `machined.root.sha256` its loader entry names, which machined-init
 * verified at boot). The boot medium is only ever read.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { BlockBackend } from "../platform/block/mod.ts";
import type { MountBackend } from "../platform/mount/mod.ts";
import { partitionPath } from "../controllers/block/mod.ts";
import { slotPaths } from "../layout/mod.ts";
import { ENTRIES_DIR, parseEntryName } from "../upgrade/mod.ts";
import { VFAT_MOUNT_OPTIONS } from "../config/keeper/mod.ts";
import type { BootMedium, InstallDecision } from "./decide_install.ts";

/** One file of the installed ESP, checked. */
export interface InstalledFile {
  /** Path on the ESP, e.g. `/A/root.img`. */
  path: string;
  bytes: number;
  sha256: string;
  /** What the copy was checked against. */
  checkedAgainst: "loader entry" | "boot medium";
}

/** What {@link installSystem} did. */
export interface InstallReport {
  target: string;
  espPartition: string;
  /** Bytes written. */
  copiedBytes: number;
  /** Bytes of the ESP that were zero on both disks and so not written. */
  unchangedZeroBytes: number;
  files: InstalledFile[];
  /** Durations (performance.now() differences), seconds. */
  copyS: number;
  verifyS: number;
}

/** A copied file differs from the boot medium's (the install stops; nothing boots from it). */
export class InstallVerifyError extends Error {
  override name = "InstallVerifyError";
  constructor(readonly path: string, readonly expected: string, readonly got: string) {
    super(`Installed ${path} has sha256 ${got}, expected ${expected}`);
  }
}

/** Options of {@link installSystem}. */
export interface InstallSystemDeps {
  block: BlockBackend;
  mount: MountBackend;
  /** Where the two ESPs are mounted read-only for the check. */
  workDir: string;
  /** Bytes per read/write. @default 8 MiB */
  chunk?: number;
  /** How long to wait for the new ESP's device node. @default 10 s */
  nodeTimeoutMs?: number;
}

type InstallPlan = Extract<InstallDecision, { action: "install" }>;

/** Copy, partition, re-read and verify. @throws InstallVerifyError, SysError from the backends. */
export async function installSystem(
  deps: InstallSystemDeps,
  boot: BootMedium,
  target: string,
  d: InstallPlan,
): Promise<InstallReport> {
  const t0 = performance.now();
  const chunk = deps.chunk ?? 8 << 20;
  let skipped = 0;
  for (let off = 0; off < d.copy.length; off += chunk) {
    const n = Math.min(chunk, d.copy.length - off);
    const data = await deps.block.read(boot.disk, d.copy.from + off, n);
    if (data.length !== n) {
      throw new RangeError(`Short read of ${boot.disk} at ${d.copy.from + off}`);
    }
    // Most of the ESP is free space: a zero chunk already zero on the target is not rewritten.
    if (isZero(data) && isZero(await deps.block.read(target, d.copy.to + off, n))) {
      skipped += n;
      continue;
    }
    await deps.block.write(target, d.copy.to + off, data);
  }
  await deps.block.writeGpt(target, d.plan.table);
  await deps.block.rereadPartitions(target);
  const copyS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const espPartition = partitionPath(target, 1);
  await waitFor(espPartition, deps.nodeTimeoutMs ?? 10_000);
  const files = await verifyCopy(deps, partitionPath(boot.disk, boot.esp.number), espPartition);
  return {
    target,
    espPartition,
    copiedBytes: d.copy.length - skipped,
    unchangedZeroBytes: skipped,
    files,
    copyS,
    verifyS: (performance.now() - t1) / 1000,
  };
}

/** Mounts both ESPs read-only and checks every file of the boot one on the target. */
async function verifyCopy(
  deps: InstallSystemDeps,
  bootEsp: string,
  targetEsp: string,
): Promise<InstalledFile[]> {
  const from = join(deps.workDir, "boot-esp");
  const to = join(deps.workDir, "target-esp");
  const mounted: string[] = [];
  try {
    for (const [source, dir] of [[bootEsp, from], [targetEsp, to]]) {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      await deps.mount.mount({
        source,
        target: dir,
        fstype: "vfat",
        flags: ["ro"],
        data: VFAT_MOUNT_OPTIONS,
      });
      mounted.push(dir);
    }
    const entryHashes = await rootHashes(from);
    const out: InstalledFile[] = [];
    for (const path of await walk(from, "")) {
      const got = await sha256File(join(to, path));
      const pinned = entryHashes.get(path);
      const expected = pinned ?? (await sha256File(join(from, path))).sha256;
      if (got.sha256 !== expected) throw new InstallVerifyError(path, expected, got.sha256);
      out.push({ path, ...got, checkedAgainst: pinned ? "loader entry" : "boot medium" });
    }
    return out;
  } finally {
    for (const dir of mounted.reverse()) {
      await deps.mount.unmount(dir, { detach: true }).catch(() => {});
    }
  }
}

/**
 * `/A/root.img` → the sha256 its loader entry pins (`machined.root.sha256=`),
 * for every slot with an entry: any of `machined-a.conf`, a trial
 * `machined-b+2-1.conf` or a bad `+0` (upgrade/entries.ts names them).
 */
async function rootHashes(esp: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const dir = join(esp, ENTRIES_DIR);
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) if (e.isFile) files.push(e.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  for (const file of files.sort()) {
    const name = parseEntryName(file);
    if (!name) continue;
    const entry = await Deno.readTextFile(join(dir, file)).catch(() => "");
    const hash = entry.match(/^options .*\bmachined\.root\.sha256=([0-9a-f]{64})\b/m)?.[1];
    if (hash) out.set(slotPaths(name.slot).rootImage, hash);
  }
  return out;
}

/** Every regular file under `dir`, as `/rel/path`, sorted. */
async function walk(dir: string, rel: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, rel))) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory) out.push(...await walk(dir, path));
    else if (e.isFile) out.push(path);
  }
  return out.sort();
}

/** Streamed SHA-256 (a root image is ~70 MiB; it is not held in memory). */
export async function sha256File(path: string): Promise<{ sha256: string; bytes: number }> {
  const h = createHash("sha256");
  let bytes = 0;
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(1 << 20);
  for (;;) {
    const n = await f.read(buf);
    if (n === null) break;
    h.update(buf.subarray(0, n));
    bytes += n;
  }
  return { sha256: h.digest("hex"), bytes };
}

function isZero(b: Uint8Array): boolean {
  let i = 0;
  if (b.byteOffset % 4 === 0) {
    const words = new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2);
    for (let w = 0; w < words.length; w++) if (words[w] !== 0) return false;
    i = words.length * 4;
  }
  for (; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

async function waitFor(path: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await Deno.stat(path).then(() => true, () => false))) {
    if (performance.now() > deadline) {
      throw new Error(`Device node "${path}" did not appear within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
