/**
 * Test support for the block domain: disk facts and GPT partitions built by
 * hand, superblocks as probe reads them, a fake sysfs tree in a temp dir, and
 * fake mkfs programs for FakeProcessBackend that write a real superblock into
 * a FakeBlockBackend disk, so discovery sees what "mkfs" made.
 * @module
 */
import type { FakeBlockBackend, GptPartition } from "../../platform/block/mod.ts";
import type { FakeProcessBackend } from "../../platform/process/mod.ts";
import type { DiskFacts, PartitionFacts } from "./disk_facts.ts";
import { partitionPath } from "./device_path.ts";
import type { VolumeLayout } from "../../layout/mod.ts";

const MiB = 1024 * 1024;

/** A small layout for in-memory disks of a few tens of MiB. */
export const TEST_LAYOUT: VolumeLayout = {
  stateSize: 4 * MiB,
  minEphemeralSize: 4 * MiB,
  alignment: MiB,
  zeroBytes: 64 * 1024,
};

/** Deterministic GUIDs: `00000000-0000-4000-8000-<n>`. */
export function sequentialGuids(prefix = "0000"): () => string {
  let n = 0;
  return () => `${prefix}0000-0000-4000-8000-${(++n).toString(16).padStart(12, "0")}`;
}

/** A partition spanning [startMiB, startMiB + sizeMiB) on 512-byte sectors. */
export function part(
  number: number,
  type: string,
  name: string,
  startMiB: number,
  sizeMiB: number,
  uuid = `00000000-0000-4000-9000-${number.toString(16).padStart(12, "0")}`,
): GptPartition {
  const first = startMiB * 2048;
  return {
    number,
    type,
    uuid,
    firstLba: first,
    lastLba: first + sizeMiB * 2048 - 1,
    name,
    attributes: 0n,
  };
}

/** Facts of a disk; GPT partitions get blank/mounted defaults. */
export function diskFacts(
  options: Partial<Omit<DiskFacts, "gpt">> & {
    gpt?: Array<GptPartition & Partial<PartitionFacts>>;
    diskGuid?: string;
  } = {},
): DiskFacts {
  const path = options.path ?? "/dev/vda";
  const { gpt, diskGuid, ...rest } = options;
  return {
    path,
    size: 64 * MiB,
    sectorSize: 512,
    readOnly: false,
    mbrPartitions: false,
    blank: gpt === undefined,
    mounted: false,
    ...rest,
    gpt: gpt && {
      diskGuid: diskGuid ?? "11111111-2222-4333-8444-555555555555",
      primaryValid: true,
      backupValid: true,
      partitions: gpt.map((p) => ({
        blank: p.fs === undefined,
        mounted: false,
        path: partitionPath(path, p.number),
        ...p,
      })),
    },
  };
}

/** The first 4 KiB of an ext4 filesystem as probe reads it. */
export function ext4Head(label: string, uuid: string): Uint8Array {
  const head = new Uint8Array(4096);
  const v = new DataView(head.buffer);
  v.setUint16(1024 + 56, 0xef53, true);
  v.setUint32(1024 + 96, 0x40 | 0x200, true);
  head.set(uuidBytes(uuid), 1024 + 104);
  head.set(new TextEncoder().encode(label.slice(0, 16)), 1024 + 120);
  return head;
}

/** The first 512 bytes of an XFS filesystem as probe reads it. */
export function xfsHead(label: string, uuid: string): Uint8Array {
  const head = new Uint8Array(512);
  head.set(new TextEncoder().encode("XFSB"), 0);
  head.set(uuidBytes(uuid), 32);
  head.set(new TextEncoder().encode(label.slice(0, 12)), 108);
  return head;
}

function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replaceAll("-", "");
  return Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
}

/**
 * Define `mkfs.ext4` and `mkfs.xfs` on `process`: each writes its superblock
 * at the partition's offset in the fake disk it belongs to and exits 0
 * (or `failWith` when set for that device).
 */
export function defineFakeMkfs(
  process: FakeProcessBackend,
  block: FakeBlockBackend,
  disks: string[],
  options: { failWith?: Map<string, number> } = {},
): void {
  const guids = sequentialGuids("fafa");
  const run = (fs: "ext4" | "xfs") => (p: { spec: { argv: string[] }; exit(c: number): void }) => {
    const argv = p.spec.argv;
    const device = argv[argv.length - 1];
    const label = argv[argv.indexOf("-L") + 1];
    const fail = options.failWith?.get(device);
    if (fail !== undefined) return p.exit(fail);
    if (device.startsWith("/dev/mapper/")) {
      // A dm-crypt mapping (fake_luks.ts): the filesystem starts at its offset 0.
      const head = fs === "ext4" ? ext4Head(label, guids()) : xfsHead(label, guids());
      const bytes = block.bytes(device);
      bytes.fill(0, 0, 65536);
      bytes.set(head, 0);
      return p.exit(0);
    }
    for (const disk of disks) {
      const bytes = block.bytes(disk);
      const gpt = gptExtents(bytes);
      const hit = gpt?.find((x) => partitionPath(disk, x.number) === device);
      if (!hit) continue;
      const head = fs === "ext4" ? ext4Head(label, guids()) : xfsHead(label, guids());
      bytes.fill(0, hit.firstLba * 512, hit.firstLba * 512 + 65536);
      bytes.set(head, hit.firstLba * 512);
      return p.exit(0);
    }
    p.exit(1);
  };
  process.define("mkfs.ext4", run("ext4")).define("mkfs.xfs", run("xfs"));
}

/**
 * The partitions' numbers and extents from the primary GPT, decoded
 * synchronously (a fake program runs synchronously at spawn).
 */
function gptExtents(bytes: Uint8Array): GptPartition[] | undefined {
  if (new TextDecoder().decode(bytes.subarray(512, 520)) !== "EFI PART") return undefined;
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  const entriesLba = Number(v.getBigUint64(512 + 72, true));
  const count = v.getUint32(512 + 80, true);
  const size = v.getUint32(512 + 84, true);
  const out: GptPartition[] = [];
  for (let i = 0; i < count; i++) {
    const o = entriesLba * 512 + i * size;
    if (bytes.subarray(o, o + 16).every((b) => b === 0)) continue;
    out.push({
      number: i + 1,
      type: "",
      uuid: "",
      firstLba: Number(v.getBigUint64(o + 32, true)),
      lastLba: Number(v.getBigUint64(o + 40, true)),
      name: "",
      attributes: 0n,
    });
  }
  return out;
}

/** One device in a fake sysfs tree. */
export interface FakeSysfsDevice {
  name: string;
  /** Bytes. */
  size: number;
  dev?: string;
  logicalBlockSize?: number;
  rotational?: boolean;
  readOnly?: boolean;
  removable?: boolean;
  model?: string;
  /** Written to `serial` at the device's top level (as virtio does). */
  serial?: string;
  /** Written to `device/serial` (as NVMe does). */
  deviceSerial?: string;
  wwid?: string;
  backingFile?: string;
  partitions?: Array<{ number: number; start: number; size: number }>;
}

/** Write `<root>/block/<name>/...` for each device. */
export async function writeFakeSysfs(root: string, devices: FakeSysfsDevice[]): Promise<void> {
  const put = async (path: string, value: string | undefined) => {
    if (value === undefined) return;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, value + "\n");
  };
  for (const d of devices) {
    const dir = `${root}/block/${d.name}`;
    await put(`${dir}/size`, String(d.size / 512));
    await put(`${dir}/dev`, d.dev ?? "254:0");
    await put(`${dir}/ro`, d.readOnly ? "1" : "0");
    await put(`${dir}/removable`, d.removable ? "1" : "0");
    await put(`${dir}/queue/rotational`, d.rotational ? "1" : "0");
    await put(`${dir}/queue/logical_block_size`, String(d.logicalBlockSize ?? 512));
    await put(`${dir}/queue/physical_block_size`, String(d.logicalBlockSize ?? 512));
    await put(`${dir}/device/model`, d.model);
    await put(`${dir}/serial`, d.serial);
    await put(`${dir}/device/serial`, d.deviceSerial);
    await put(`${dir}/wwid`, d.wwid);
    if (d.name.startsWith("loop")) await put(`${dir}/loop/backing_file`, d.backingFile ?? "");
    for (const p of d.partitions ?? []) {
      const pname = /\d$/.test(d.name) ? `${d.name}p${p.number}` : `${d.name}${p.number}`;
      await put(`${dir}/${pname}/partition`, String(p.number));
      await put(`${dir}/${pname}/start`, String(p.start / 512));
      await put(`${dir}/${pname}/size`, String(p.size / 512));
    }
  }
}
