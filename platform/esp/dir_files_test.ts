import assert from "node:assert/strict";
import { DirEspFiles } from "./dir_files.ts";
import type { EspBackend } from "./backend.ts";
import { installBundle } from "../../upgrade/mod.ts";
import { hostCompatible } from "../../bundle/mod.ts";
import { chunked, imagedEsp, testBundle, testKeys } from "../../upgrade/testing.ts";

Deno.test("DirEspFiles: an install on real files (fsync of files and directories) lands the slot", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const [p, b] of imagedEsp().files) {
      await Deno.mkdir(`${dir}${p.slice(0, p.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeFile(`${dir}${p}`, b);
    }
    const files = new DirEspFiles(dir);
    const esp: EspBackend = { read: (fn) => fn(files), write: (fn) => fn(files) };
    const k = await testKeys();
    const b = await testBundle({ key: k.signing });
    await installBundle(chunked(b.bytes, 4096), {
      esp,
      booted: "A",
      keys: [k.trusted],
      machine: hostCompatible(),
    });
    assert.deepEqual(await Deno.readFile(`${dir}/B/root.img`), b.files[2]);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(`${dir}/loader/entries`))).map((e) => e.name).sort(),
      ["machined-a.conf", "machined-b+3.conf"],
    );
    assert.deepEqual((await Array.fromAsync(Deno.readDir(`${dir}/B`))).map((e) => e.name).sort(), [
      "initramfs.img",
      "root.img",
      "vmlinuz",
    ]);
    await assert.rejects(files.readChunks("/../etc/passwd").next(), TypeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
