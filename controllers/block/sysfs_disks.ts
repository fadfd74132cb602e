/**
 * Block devices as sysfs lists them (`<root>/block/*`): sizes, sector sizes,
 * identity (model, serial, WWID), flags and the kernel's partitions. The root
 * is a parameter so tests read a fake tree in a temp dir. Unbound loop devices
 * and zram devices without a disk size are left out; bound loop devices are
 * kept (tests and file-backed disks use them).
 * @module
 */
import type { DiskKind } from "../../resources/mod.ts";

/** A partition the kernel knows (bytes). */
export interface SysfsPartition {
  /** Kernel name, e.g. `vda2`, `loop0p1`. */
  name: string;
  number: number;
  start: number;
  size: number;
}

/** One block device. */
export interface SysfsDisk {
  name: string;
  /** `major:minor`. */
  dev: string;
  /** Bytes (sysfs counts 512-byte sectors whatever the logical size). */
  size: number;
  logicalSectorSize: number;
  physicalSectorSize: number;
  model: string;
  serial: string;
  wwid: string;
  rotational: boolean;
  readOnly: boolean;
  removable: boolean;
  kind: DiskKind;
  backingFile: string;
  partitions: SysfsPartition[];
}

async function text(path: string): Promise<string> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return "";
  }
}

async function first(dir: string, names: string[]): Promise<string> {
  for (const n of names) {
    const v = await text(`${dir}/${n}`);
    if (v) return v;
  }
  return "";
}

const num = (s: string, fallback = 0) => (s === "" || isNaN(Number(s)) ? fallback : Number(s));

/** The kind of device, from its kernel name and flags. */
export function diskKind(name: string, rotational: boolean): DiskKind {
  if (name.startsWith("nvme")) return "nvme";
  if (name.startsWith("mmcblk")) return "sd";
  if (name.startsWith("sr")) return "cdrom";
  if (name.startsWith("loop")) return "loop";
  if (name.startsWith("ram") || name.startsWith("zram")) return "ram";
  if (name.startsWith("dm-") || name.startsWith("md") || name.startsWith("nbd")) return "virtual";
  return rotational ? "hdd" : "ssd";
}

/** Read one device directory, or undefined when it is to be skipped. */
export async function readSysfsDisk(root: string, name: string): Promise<SysfsDisk | undefined> {
  const dir = `${root}/block/${name}`;
  const size = num(await text(`${dir}/size`)) * 512;
  const backingFile = name.startsWith("loop") ? await text(`${dir}/loop/backing_file`) : "";
  if (name.startsWith("loop") && !backingFile) return undefined;
  if ((name.startsWith("zram") || name.startsWith("ram")) && size === 0) return undefined;
  const rotational = (await text(`${dir}/queue/rotational`)) === "1";
  const partitions: SysfsPartition[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.name.startsWith(name)) continue;
      const p = `${dir}/${e.name}`;
      const number = num(await text(`${p}/partition`), -1);
      if (number < 0) continue;
      partitions.push({
        name: e.name,
        number,
        start: num(await text(`${p}/start`)) * 512,
        size: num(await text(`${p}/size`)) * 512,
      });
    }
  } catch {
    // The device went away while being read.
    return undefined;
  }
  const logical = num(await text(`${dir}/queue/logical_block_size`), 512);
  return {
    name,
    dev: await text(`${dir}/dev`),
    size,
    logicalSectorSize: logical,
    physicalSectorSize: num(await text(`${dir}/queue/physical_block_size`), logical),
    model: await first(dir, ["device/model", "device/name"]),
    serial: await first(dir, ["serial", "device/serial"]),
    wwid: await first(dir, ["wwid", "device/wwid"]),
    rotational,
    readOnly: (await text(`${dir}/ro`)) === "1",
    removable: (await text(`${dir}/removable`)) === "1",
    kind: diskKind(name, rotational),
    backingFile,
    partitions: partitions.sort((a, b) => a.number - b.number),
  };
}

/** Every block device under `<root>/block`, sorted by name. Missing root: none. */
export async function readSysfsDisks(root = "/sys"): Promise<SysfsDisk[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(`${root}/block`)) names.push(e.name);
  } catch {
    return [];
  }
  const disks: SysfsDisk[] = [];
  for (const n of names.sort()) {
    const d = await readSysfsDisk(root, n);
    if (d) disks.push(d);
  }
  return disks;
}
