/**
 * What every {@link EspBackend} must do, run against the fake and the real
 * file operations (over a directory; on a vfat in the root tier): list,
 * write (replacing), rename over, remove (a missing file is fine), fsync a
 * directory, read back the bytes written; a write whose chunks hold more
 * or fewer bytes than it declared is refused.
 */
import assert from "node:assert/strict";
import { bytesContent, type EspBackend, EspSizeMismatch, textContent } from "./backend.ts";

/** Register the conformance tests for `name`; `make` gives a backend over an ESP with `/A` and `/loader/entries`. */
export function espBackendConformance(
  name: string,
  make: () => Promise<{ esp: EspBackend; close(): Promise<void> }>,
): void {
  Deno.test(`${name}: write, list, read back, rename over, remove, sync`, async () => {
    const { esp, close } = await make();
    try {
      await esp.write(async (fs) => {
        await fs.writeFile("/A/x.new", textContent("one"));
        await fs.writeFile("/A/x.new", textContent("two")); // truncates
        await fs.writeFile("/A/x", textContent("old"));
        await fs.rename("/A/x.new", "/A/x");
        await fs.syncDir("/A");
        await fs.remove("/A/missing");
        await fs.writeFile("/loader/entries/e.conf", textContent("version 1\n"));
        await fs.remove("/loader/entries/e.conf");
        const three = bytesContent(new Uint8Array(3)).chunks;
        await assert.rejects(fs.writeFile("/A/y.new", { size: 4, chunks: three }), EspSizeMismatch);
        await fs.remove("/A/y.new");
      });
      await esp.read(async (fs) => {
        assert.deepEqual(await fs.list("/A"), ["x"]);
        assert.equal(await fs.readText("/A/x"), "two");
        const parts: Uint8Array[] = [];
        for await (const c of fs.readChunks("/A/x")) parts.push(c);
        assert.equal(new TextDecoder().decode(parts[0]), "two");
        assert.deepEqual(await fs.list("/loader/entries"), []);
        assert.deepEqual(await fs.list("/nowhere"), []);
        await assert.rejects(fs.readText("/A/missing"), Deno.errors.NotFound);
      });
    } finally {
      await close();
    }
  });
}
