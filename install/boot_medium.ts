/**
 * Which disk the node booted from: machined-init attaches the slot's root
 * image to a loop device over its byte range of the whole disk (or, when the
 * file is fragmented, over the file), and / is mounted from that loop
 * device, or from the dm-verity device over it (`/dev/dm-N`, whose one
 * sysfs slave is the loop device) when the image carries a hash tree. The
 * loop device's backing file is therefore the boot disk; its
 * ESP is the first EFI System Partition of its GPT. A file-backed loop (or
 * no loop at all: dev mode, a test) leaves the boot medium unknown, and
 * then nothing is installed (install/decide_install.ts).
 * @module
 */
import type { BlockBackend } from "../platform/block/mod.ts";
import type { MountBackend } from "../platform/mount/mod.ts";
import { PARTITION_TYPE } from "../layout/mod.ts";
import type { BootMedium } from "./decide_install.ts";

/** Reads a small text file (sysfs); injected by tests. */
export type ReadText = (path: string) => Promise<string>;
/** Lists a directory's entry names (sysfs); injected by tests. */
export type ListDir = (path: string) => Promise<string[]>;

async function listDir(path: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(path)) names.push(e.name);
  return names;
}

/** The loop device `/` is mounted from: itself, or the only slave of its dm device. */
async function rootLoop(source: string | undefined, list: ListDir): Promise<string | undefined> {
  const loop = source?.match(/^\/dev\/(loop\d+)$/)?.[1];
  if (loop) return loop;
  const dm = source?.match(/^\/dev\/(dm-\d+)$/)?.[1];
  if (!dm) return undefined;
  const slaves = await list(`/sys/block/${dm}/slaves`).catch(() => []);
  return slaves.length === 1 && /^loop\d+$/.test(slaves[0]) ? slaves[0] : undefined;
}

/**
 * The whole disk `/` is mounted from through a loop device (directly or
 * under dm-verity), or undefined. Pure over its inputs: the mount table and
 * sysfs.
 */
export async function bootDiskOf(
  mounts: ReadonlyArray<{ mountPoint: string; source: string }>,
  readText: ReadText,
  list: ListDir = listDir,
): Promise<string | undefined> {
  const root = mounts.findLast((m) => m.mountPoint === "/");
  const loop = await rootLoop(root?.source, list);
  if (!loop) return undefined;
  const backing = (await readText(`/sys/block/${loop}/loop/backing_file`).catch(() => "")).trim();
  return /^\/dev\/[A-Za-z0-9]+$/.test(backing) ? backing : undefined;
}

/** The boot disk and its ESP, or undefined when either is unknown. */
export async function findBootMedium(
  mount: MountBackend,
  block: BlockBackend,
  readText: ReadText = (p) => Deno.readTextFile(p),
): Promise<BootMedium | undefined> {
  const disk = await bootDiskOf(await mount.mounts(), readText);
  if (!disk) return undefined;
  const gpt = await block.readGpt(disk).catch(() => undefined);
  const esp = gpt?.table.partitions.find((p) => p.type === PARTITION_TYPE.EFI_SYSTEM);
  if (!esp) return undefined;
  return { disk, esp: { number: esp.number, firstLba: esp.firstLba, lastLba: esp.lastLba } };
}
