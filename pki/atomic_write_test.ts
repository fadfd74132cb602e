import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, writeFileAtomic } from "./atomic_write.ts";

Deno.test("writeFileAtomic writes 0600 by default, replaces, and leaves no temp files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "secret.key");
    await writeFileAtomic(path, "one");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    await writeFileAtomic(path, new TextEncoder().encode("two"));
    assert.equal(await Deno.readTextFile(path), "two");
    await writeFileAtomic(join(dir, "pub.crt"), "c", { mode: 0o644 });
    assert.equal((await Deno.stat(join(dir, "pub.crt"))).mode! & 0o777, 0o644);
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
    assert.deepEqual(names, ["pub.crt", "secret.key"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic tightens a pre-existing permissive file to 0600", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "k");
    await Deno.writeTextFile(path, "old", { mode: 0o644 });
    await Deno.chmod(path, 0o644);
    await writeFileAtomic(path, "new");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failed rename leaves the target untouched and removes the temp file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const target = join(dir, "occupied");
    await Deno.mkdir(target);
    await Deno.writeTextFile(join(target, "keep"), "x");
    await assert.rejects(writeFileAtomic(target, "data"));
    const names = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
    assert.deepEqual(names, ["occupied"]);
    assert.ok(await pathExists(join(target, "keep")));
    await assert.rejects(writeFileAtomic(join(dir, "missing", "f"), "x"), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
