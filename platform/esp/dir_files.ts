/**
 * {@link EspFiles} over a directory (the mounted ESP, or a temporary
 * directory in tests): real files, real fsync of files and directories.
 *
 * FAT has no journal, and Linux's vfat writes a file's clusters into the
 * FAT (block device buffers) and its start and size into the directory
 * entry (the inode) at different times: the flusher may write the first
 * without the second. A file grown by plain writes over more than the
 * flusher's 30 s then leaves, at a power cut, clusters the FAT holds and no
 * directory entry names: lost for good, since nothing on the node runs
 * fsck.fat (CI's upgrade power cut found 40 MB so). So {@link
 * DirEspFiles.writeFile} first grows the file to its final size in steps of
 * {@link PREALLOCATE_STEP_BYTES}, each fsynced (vfat zero-fills the step
 * and syncs its FAT and directory entry together), then writes the data
 * over it, which changes no FAT entry and no size. The window in which a
 * cut can leave the FAT and the entry disagreeing shrinks from the whole
 * write to one step's fsync. The cost is writing the file twice
 * (docs/decisions.md, "The ESP's files grown to their size before they are written").
 */
import { type EspFiles, type FileContent, sizedChunks } from "./backend.ts";

/** How far one preallocation step grows a file before it is fsynced. */
export const PREALLOCATE_STEP_BYTES = 8 << 20;

/** The sizes a file of `size` bytes is grown to, one fsync each. Pure. */
export function preallocationSteps(size: number, step = PREALLOCATE_STEP_BYTES): number[] {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`bad file size ${size}`);
  if (!Number.isSafeInteger(step) || step <= 0) throw new RangeError(`bad step ${step}`);
  const out: number[] = [];
  for (let at = step; at < size; at += step) out.push(at);
  if (size > 0) out.push(size);
  return out;
}

/** See the module doc. */
export class DirEspFiles implements EspFiles {
  constructor(private readonly root: string) {}

  #p(path: string): string {
    if (!path.startsWith("/") || path.split("/").includes("..")) {
      throw new TypeError(`ESP path ${JSON.stringify(path)} is not absolute within the ESP`);
    }
    return `${this.root}${path}`;
  }

  async list(dir: string): Promise<string[]> {
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(this.#p(dir))) out.push(e.name);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
    return out.sort();
  }

  hostPath(path: string): string {
    return this.#p(path);
  }

  readText(path: string): Promise<string> {
    return Deno.readTextFile(this.#p(path));
  }

  async *readChunks(path: string): AsyncGenerator<Uint8Array> {
    const f = await Deno.open(this.#p(path));
    try {
      const buf = new Uint8Array(1 << 20);
      for (;;) {
        const n = await f.read(buf);
        if (n === null) return;
        yield buf.slice(0, n);
      }
    } finally {
      f.close();
    }
  }

  async writeFile(path: string, content: FileContent): Promise<void> {
    const f = await Deno.open(this.#p(path), { write: true, create: true, truncate: true });
    try {
      for (const size of preallocationSteps(content.size)) {
        await f.truncate(size);
        await f.sync();
      }
      await f.seek(0, Deno.SeekMode.Start);
      for await (const c of sizedChunks(path, content)) {
        let at = 0;
        while (at < c.length) at += await f.write(c.subarray(at));
      }
      await f.sync();
    } finally {
      f.close();
    }
  }

  rename(from: string, to: string): Promise<void> {
    return Deno.rename(this.#p(from), this.#p(to));
  }

  async remove(path: string): Promise<void> {
    await Deno.remove(this.#p(path)).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }

  async syncDir(dir: string): Promise<void> {
    const f = await Deno.open(this.#p(dir), { read: true });
    try {
      await f.sync();
    } finally {
      f.close();
    }
  }
}
