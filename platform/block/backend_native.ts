/**
 * {@link BlockBackend} over real devices and image files. The only file in
 * platform/block that imports native-ops (for the ioctls); reads and writes go
 * through Deno's file API, partition state through /sys/class/block.
 * @module
 */
import { isSysError, loadNative } from "../../native-ops/mod.ts";
import type { BlockBackend, DiskGeometry, KernelPartition, RereadMethod } from "./backend.ts";
import { encodeGpt, type GptReadResult, type GptTable, readGpt } from "./gpt.ts";
import { keepHybridMbr } from "./hybrid_mbr.ts";
import { planPartitionSync } from "./partition_sync.ts";
import { type FsInfo, PROBE_BYTES, probeSuperblock } from "./probe.ts";
import { sysError } from "./sys_error.ts";

/** The real block backend. */
export class NativeBlockBackend implements BlockBackend {
  readonly #n = loadNative();

  async geometry(path: string): Promise<DiskGeometry> {
    const st = await Deno.stat(path).catch((e) => {
      throw sysError("stat", path, e);
    });
    if (st.isFile) {
      return { size: st.size, logicalSectorSize: 512, physicalSectorSize: 512, readOnly: false };
    }
    return await this.#n.blockGeometry(path) as DiskGeometry;
  }

  async read(path: string, offset: number, length: number): Promise<Uint8Array> {
    await this.#dropCache(path);
    using f = await Deno.open(path, { read: true }).catch((e) => {
      throw sysError("open", path, e);
    });
    await f.seek(offset, Deno.SeekMode.Start);
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = await f.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    return buf.subarray(0, got);
  }

  async write(path: string, offset: number, data: Uint8Array): Promise<void> {
    await this.#writeAll(path, [{ offset, data }]);
  }

  async readGpt(path: string): Promise<GptReadResult | undefined> {
    const g = await this.geometry(path);
    return readGpt((o, l) => this.read(path, o, l), g.size, g.logicalSectorSize);
  }

  async writeGpt(path: string, table: GptTable): Promise<void> {
    const g = await this.geometry(path);
    const sector0 = await this.read(path, 0, g.logicalSectorSize);
    const writes = keepHybridMbr(sector0, table, encodeGpt(table, g.size, g.logicalSectorSize));
    await this.#writeAll(path, writes);
  }

  async kernelPartitions(path: string): Promise<KernelPartition[]> {
    const st = await Deno.stat(path);
    if (st.isFile) return [];
    const name = (await Deno.realPath(path)).split("/").pop()!;
    const dir = `/sys/class/block/${name}`;
    const out: KernelPartition[] = [];
    for await (const e of Deno.readDir(dir)) {
      const num = await readNumber(`${dir}/${e.name}/partition`);
      if (num === undefined) continue;
      // sysfs start and size are always in 512-byte units.
      const start = (await readNumber(`${dir}/${e.name}/start`))! * 512;
      const size = (await readNumber(`${dir}/${e.name}/size`))! * 512;
      out.push({ number: num, start, size });
    }
    return out.sort((a, b) => a.number - b.number);
  }

  async rereadPartitions(path: string): Promise<RereadMethod> {
    let busy = false;
    try {
      await this.#n.blockRereadPartitions(path);
    } catch (e) {
      if (!isSysError(e, "EBUSY")) throw e;
      busy = true;
    }
    // Check the result either way: a kernel built without the GPT parser
    // (CONFIG_EFI_PARTITION=n) accepts BLKRRPART and finds nothing.
    const gpt = await this.readGpt(path);
    const g = await this.geometry(path);
    const plan = planPartitionSync(
      await this.kernelPartitions(path),
      gpt?.table.partitions ?? [],
      g.logicalSectorSize,
    );
    if (!busy && plan.length === 0) return "BLKRRPART";
    for (const step of plan) {
      if (step.op === "delete") await this.#n.blockDeletePartition(path, step.number);
      else await this.#n.blockAddPartition(path, step.number, step.start, step.size);
    }
    return "BLKPG";
  }

  async discard(path: string, offset: number, length: number): Promise<void> {
    await this.#n.blockDiscard(path, offset, length);
  }

  async probe(path: string, offset = 0): Promise<FsInfo | undefined> {
    return probeSuperblock(await this.read(path, offset, PROBE_BYTES));
  }

  /**
   * Drops a block device's page cache before it is read (BLKFLSBUF). The
   * kernel keeps a device's cache while anything holds it open, and the root
   * image's loop device holds the boot disk open for good: without this, a
   * read through the whole disk returns the zeros cached before mkfs wrote a
   * partition's superblock through the partition's own node. Image files and
   * an addon without the call are read as they are.
   */
  async #dropCache(path: string): Promise<void> {
    if (typeof this.#n.blockFlushBuffers !== "function") return;
    const st = await Deno.stat(path).catch(() => undefined);
    if (!st?.isBlockDevice) return;
    await this.#n.blockFlushBuffers(path).catch(() => {});
  }

  async #writeAll(path: string, writes: { offset: number; data: Uint8Array }[]): Promise<void> {
    using f = await Deno.open(path, { write: true }).catch((e) => {
      throw sysError("open", path, e);
    });
    for (const w of writes) {
      await f.seek(w.offset, Deno.SeekMode.Start);
      let done = 0;
      while (done < w.data.length) done += await f.write(w.data.subarray(done));
    }
    await f.sync();
  }
}

async function readNumber(path: string): Promise<number | undefined> {
  try {
    return Number((await Deno.readTextFile(path)).trim());
  } catch {
    return undefined;
  }
}
