/**
 * {@link EspFiles} over a directory (the mounted ESP, or a temporary
 * directory in tests): real files, real fsync of files and directories.
 */
import type { EspFiles } from "./backend.ts";

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

  async writeFile(path: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    const f = await Deno.open(this.#p(path), { write: true, create: true, truncate: true });
    try {
      for await (const c of chunks) {
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
