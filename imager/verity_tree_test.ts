import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  appendVerityTree,
  padToBlock,
  VERITY_BLOCK,
  veritySalt,
  verityTree,
} from "./verity_tree.ts";

const SALT = new Uint8Array(32).fill(7);

function h(...parts: Uint8Array[]): Uint8Array {
  const x = createHash("sha256");
  for (const p of parts) x.update(p);
  return new Uint8Array(x.digest());
}
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function blocks(n: number): Uint8Array {
  const d = new Uint8Array(n * VERITY_BLOCK);
  for (let i = 0; i < n; i++) d.fill(i + 1, i * VERITY_BLOCK, (i + 1) * VERITY_BLOCK);
  return d;
}

Deno.test("one data block has no tree: the root is its salted digest", () => {
  const t = verityTree(blocks(1), SALT);
  assert.equal(t.tree.length, 0);
  assert.equal(t.dataBlocks, 1);
  assert.equal(t.rootHash, hex(h(SALT, blocks(1))));
});

Deno.test("up to 128 data blocks: one zero-padded hash block, the root hashes it", () => {
  const d = blocks(3);
  const t = verityTree(d, SALT);
  assert.equal(t.tree.length, VERITY_BLOCK);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(
      t.tree.subarray(i * 32, i * 32 + 32),
      h(SALT, d.subarray(i * 4096, (i + 1) * 4096)),
    );
  }
  assert.ok(t.tree.subarray(96).every((b) => b === 0));
  assert.equal(t.rootHash, hex(h(SALT, t.tree)));
  assert.equal(t.salt, hex(SALT));
});

Deno.test("129 data blocks: two levels, the level nearest the root first", () => {
  const d = blocks(129);
  const t = verityTree(d, SALT);
  // 1 top block + 2 leaf blocks.
  assert.equal(t.tree.length, 3 * VERITY_BLOCK);
  const leaves = t.tree.subarray(VERITY_BLOCK);
  assert.deepEqual(leaves.subarray(128 * 32, 129 * 32), h(SALT, d.subarray(128 * 4096)));
  const top = t.tree.subarray(0, VERITY_BLOCK);
  assert.deepEqual(top.subarray(0, 32), h(SALT, leaves.subarray(0, 4096)));
  assert.deepEqual(top.subarray(32, 64), h(SALT, leaves.subarray(4096)));
  assert.equal(t.rootHash, hex(h(SALT, top)));
});

Deno.test("unaligned or empty data is refused; padding fills the last block with zeros", () => {
  assert.throws(() => verityTree(new Uint8Array(10), SALT), RangeError);
  assert.throws(() => verityTree(new Uint8Array(0), SALT), RangeError);
  const p = padToBlock(new Uint8Array([1, 2, 3]));
  assert.equal(p.length, VERITY_BLOCK);
  assert.deepEqual(p.subarray(0, 4), new Uint8Array([1, 2, 3, 0]));
  const aligned = blocks(2);
  assert.equal(padToBlock(aligned), aligned);
});

Deno.test("the salt is reproducible and follows the content", () => {
  assert.deepEqual(veritySalt(blocks(2)), veritySalt(blocks(2)));
  assert.notDeepEqual(veritySalt(blocks(2)), veritySalt(blocks(3)));
});

const VERITYSETUP = ["/usr/sbin/veritysetup", "/sbin/veritysetup", "/usr/bin/veritysetup"].find(
  (p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  },
);

Deno.test({
  // Ignored, not passed, without veritysetup (cryptsetup-bin, imager/DEBIAN_PACKAGES).
  name: "veritysetup verifies the appended tree, and refuses a flipped data byte",
  ignore: VERITYSETUP === undefined,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const file = `${dir}/root.img`;
      // 300 blocks and a ragged end: two levels, and padding.
      const data = new Uint8Array(300 * VERITY_BLOCK + 123);
      for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
      await Deno.writeFile(file, data);
      const p = await appendVerityTree(file);
      assert.equal(p.dataBlocks, 301);
      const verify = (f: string) =>
        new Deno.Command(VERITYSETUP!, {
          args: [
            "verify",
            "--no-superblock",
            "--format=1",
            "--hash=sha256",
            "--data-block-size=4096",
            "--hash-block-size=4096",
            `--data-blocks=${p.dataBlocks}`,
            `--hash-offset=${p.dataBlocks * VERITY_BLOCK}`,
            `--salt=${p.salt}`,
            f,
            f,
            p.rootHash,
          ],
        }).output();
      const ok = await verify(file);
      assert.equal(ok.code, 0, new TextDecoder().decode(ok.stderr));
      const bad = await Deno.readFile(file);
      bad[1000] ^= 1;
      await Deno.writeFile(`${dir}/bad.img`, bad);
      assert.notEqual((await verify(`${dir}/bad.img`)).code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
