import assert from "node:assert/strict";
import { DirEspFiles, PREALLOCATE_STEP_BYTES, preallocationSteps } from "./dir_files.ts";
import { bytesContent, type EspBackend, EspSizeMismatch } from "./backend.ts";
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

Deno.test("preallocationSteps: grown in whole steps to the exact size, nothing for an empty file", () => {
  const mib = 1 << 20;
  assert.equal(PREALLOCATE_STEP_BYTES, 8 * mib);
  assert.deepEqual(preallocationSteps(0), []);
  assert.deepEqual(preallocationSteps(1), [1]);
  assert.deepEqual(preallocationSteps(8 * mib), [8 * mib]);
  assert.deepEqual(preallocationSteps(8 * mib + 1), [8 * mib, 8 * mib + 1]);
  assert.deepEqual(preallocationSteps(20 * mib), [8 * mib, 16 * mib, 20 * mib]);
  assert.deepEqual(preallocationSteps(10, 4), [4, 8, 10]);
  assert.throws(() => preallocationSteps(-1), RangeError);
  assert.throws(() => preallocationSteps(1.5), RangeError);
  assert.throws(() => preallocationSteps(10, 0), RangeError);
});

Deno.test("DirEspFiles.writeFile: the declared size is the file's; more or fewer bytes are refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = new DirEspFiles(dir);
    const bytes = new Uint8Array(9 << 20).map((_, i) => i % 251);
    await files.writeFile("/f", bytesContent(bytes));
    assert.deepEqual(await Deno.readFile(`${dir}/f`), bytes);
    // Rewritten smaller: the old tail is gone (truncated before growing).
    await files.writeFile("/f", bytesContent(bytes.subarray(0, 3)));
    assert.deepEqual(await Deno.readFile(`${dir}/f`), bytes.subarray(0, 3));
    const short = { size: 10, chunks: bytesContent(new Uint8Array(4)).chunks };
    const e1 = await files.writeFile("/s", short).catch((e) => e);
    assert.ok(e1 instanceof EspSizeMismatch, String(e1));
    assert.match(e1.message, /^"\/s": declared 10 bytes, the chunks held 4$/);
    assert.deepEqual([e1.path, e1.declared, e1.seen, e1.over], ["/s", 10, 4, false]);
    const long = { size: 2, chunks: bytesContent(new Uint8Array(4)).chunks };
    const e2 = await files.writeFile("/l", long).catch((e) => e);
    assert.ok(e2 instanceof EspSizeMismatch, String(e2));
    assert.match(e2.message, /declared 2 bytes, the chunks held more than 4$/);
    assert.equal(e2.over, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
