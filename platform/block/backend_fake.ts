/**
 * A fake set of disks backed by Uint8Arrays, with a simulated kernel view of
 * their partitions: BLKRRPART fails with EBUSY while a partition is held
 * (`hold`), BLKPG then syncs only what changed, exactly like the native
 * backend. Image files (`addImage`) have no kernel view: re-reading is ENOTTY.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import type { BlockBackend, DiskGeometry, KernelPartition, RereadMethod } from "./backend.ts";
import {
  applyWrites,
  encodeGpt,
  type GptReadResult,
  type GptTable,
  imageReader,
  readGpt,
} from "./gpt.ts";
import { planPartitionSync } from "./partition_sync.ts";
import { keepHybridMbr } from "./hybrid_mbr.ts";
import { type FsInfo, PROBE_BYTES, probeSuperblock } from "./probe.ts";

interface FakeDisk {
  data: Uint8Array;
  sectorSize: number;
  physicalSectorSize: number;
  readOnly: boolean;
  image: boolean;
  kernel: KernelPartition[];
  held: Map<number, number>;
}

function fail(op: string, code: string, detail: string): never {
  throw new SysError(op, errnoValue(code), detail);
}

/** The fake block backend. */
export class FakeBlockBackend implements BlockBackend {
  /** Arm failures per method name (`writeGpt`, `rereadPartitions`, ...). */
  readonly faults = new FaultInjector();
  #disks = new Map<string, FakeDisk>();

  /** Add a block device of `size` bytes (zeroed). */
  addDisk(
    path: string,
    size: number,
    options: { sectorSize?: number; physicalSectorSize?: number; readOnly?: boolean } = {},
  ): void {
    this.#disks.set(path, {
      data: new Uint8Array(size),
      sectorSize: options.sectorSize ?? 512,
      physicalSectorSize: options.physicalSectorSize ?? options.sectorSize ?? 512,
      readOnly: options.readOnly ?? false,
      image: false,
      kernel: [],
      held: new Map(),
    });
  }

  /** Add an image file of `size` bytes: no kernel partitions, no ioctls. */
  addImage(path: string, size: number): void {
    this.addDisk(path, size);
    this.#disks.get(path)!.image = true;
  }

  /** The disk's bytes (live, for inspection and seeding). */
  bytes(path: string): Uint8Array {
    return this.#disk("open", path).data;
  }

  /** Keep partition `number` open (mounted), as a process holding it would. */
  hold(path: string, number: number): () => void {
    const d = this.#disk("open", path);
    if (!d.kernel.some((p) => p.number === number)) fail("open", "ENOENT", `${path}p${number}`);
    d.held.set(number, (d.held.get(number) ?? 0) + 1);
    return () => {
      const n = (d.held.get(number) ?? 1) - 1;
      if (n <= 0) d.held.delete(number);
      else d.held.set(number, n);
    };
  }

  async geometry(path: string): Promise<DiskGeometry> {
    await this.#enter("geometry", [path]);
    const d = this.#disk("stat", path);
    return {
      size: d.data.length,
      logicalSectorSize: d.image ? 512 : d.sectorSize,
      physicalSectorSize: d.image ? 512 : d.physicalSectorSize,
      readOnly: d.readOnly,
    };
  }

  async read(path: string, offset: number, length: number): Promise<Uint8Array> {
    await this.#enter("read", [path, offset, length]);
    return this.#disk("open", path).data.slice(offset, offset + length);
  }

  async write(path: string, offset: number, data: Uint8Array): Promise<void> {
    await this.#enter("write", [path, offset, data]);
    this.#writable(path).data.set(data, offset);
  }

  async readGpt(path: string): Promise<GptReadResult | undefined> {
    await this.#enter("readGpt", [path]);
    const d = this.#disk("open", path);
    return readGpt(imageReader(d.data), d.data.length, d.sectorSize);
  }

  async writeGpt(path: string, table: GptTable): Promise<void> {
    await this.#enter("writeGpt", [path, table]);
    const d = this.#writable(path);
    const sector0 = d.data.slice(0, d.sectorSize);
    applyWrites(
      d.data,
      keepHybridMbr(sector0, table, encodeGpt(table, d.data.length, d.sectorSize)),
    );
  }

  async kernelPartitions(path: string): Promise<KernelPartition[]> {
    await this.#enter("kernelPartitions", [path]);
    return structuredClone(this.#disk("stat", path).kernel);
  }

  async rereadPartitions(path: string): Promise<RereadMethod> {
    await this.#enter("rereadPartitions", [path]);
    const d = this.#disk("open", path);
    if (d.image) fail("BLKRRPART", "ENOTTY", path);
    const gpt = await readGpt(imageReader(d.data), d.data.length, d.sectorSize);
    const parts = gpt?.table.partitions ?? [];
    if (d.held.size === 0) {
      d.kernel = planPartitionSync([], parts, d.sectorSize).flatMap((s) =>
        s.op === "add" ? [{ number: s.number, start: s.start, size: s.size }] : []
      );
      return "BLKRRPART";
    }
    for (const step of planPartitionSync(d.kernel, parts, d.sectorSize)) {
      if (step.op === "delete") {
        if (d.held.has(step.number)) {
          fail("BLKPG_DEL_PARTITION", "EBUSY", `${path} partition ${step.number}`);
        }
        d.kernel = d.kernel.filter((p) => p.number !== step.number);
      } else {
        const clash = d.kernel.some((p) =>
          p.number === step.number ||
          (step.start < p.start + p.size && p.start < step.start + step.size)
        );
        if (clash) fail("BLKPG_ADD_PARTITION", "EBUSY", `${path} partition ${step.number}`);
        d.kernel.push({ number: step.number, start: step.start, size: step.size });
        d.kernel.sort((a, b) => a.number - b.number);
      }
    }
    return "BLKPG";
  }

  async discard(path: string, offset: number, length: number): Promise<void> {
    await this.#enter("discard", [path, offset, length]);
    const d = this.#writable(path);
    if (d.image) fail("BLKDISCARD", "ENOTTY", path);
    if (offset % d.sectorSize || length % d.sectorSize || offset + length > d.data.length) {
      fail("BLKDISCARD", "EINVAL", path);
    }
    d.data.fill(0, offset, offset + length);
  }

  async probe(path: string, offset = 0): Promise<FsInfo | undefined> {
    await this.#enter("probe", [path, offset]);
    return probeSuperblock(this.#disk("open", path).data.slice(offset, offset + PROBE_BYTES));
  }

  async #enter(op: string, args: unknown[]): Promise<void> {
    await Promise.resolve();
    this.faults.check(op, args);
  }

  #disk(op: string, path: string): FakeDisk {
    const d = this.#disks.get(path);
    if (!d) fail(op, "ENOENT", path);
    return d;
  }

  #writable(path: string): FakeDisk {
    const d = this.#disk("open", path);
    if (d.readOnly) fail("open", "EROFS", path);
    return d;
  }
}
