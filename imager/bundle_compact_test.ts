import assert from "node:assert/strict";
import { join } from "node:path";
import { compactBundle } from "./bundle_compact.ts";

const SOURCE = `/** A JSDoc comment → with non-ASCII text, dropped. */
class FancyRefusal extends Error {
  constructor(message) {
    // A line comment: dropped.
    super(message);
    this.name = new.target.name;
  }
}
export function describeRefusal() {
  return new FancyRefusal("budget \u2264 5 \u00a7 4.1").name + " " + describeRefusal.name;
}
export const arrow = "\u2192";
`;

Deno.test("compactBundle: no comments, ASCII only, every name kept, same behaviour", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "main.js");
    await Deno.writeTextFile(file, SOURCE);
    const before = await import(`file://${file}?before`);
    const r = await compactBundle(file);
    const text = await Deno.readTextFile(file);
    assert.equal(r.bytesAfter, new TextEncoder().encode(text).length);
    assert.ok(r.bytesAfter < r.bytesBefore, `${r.bytesAfter} < ${r.bytesBefore}`);
    assert.doesNotMatch(text, /JSDoc|line comment/);
    const wide = [...text].filter((c) => c.charCodeAt(0) > 0x7f);
    assert.deepEqual(wide, [], "ASCII only: V8 keeps it one byte per character");
    const after = await import(`file://${file}?after`);
    assert.equal(after.describeRefusal(), "FancyRefusal describeRefusal");
    assert.equal(after.describeRefusal(), before.describeRefusal());
    assert.equal(after.arrow, "\u2192");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compactBundle: the same input gives the same bytes (reproducible images)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const outputs = [];
    for (const name of ["a.js", "b.js"]) {
      await Deno.writeTextFile(join(dir, name), SOURCE);
      await compactBundle(join(dir, name));
      outputs.push(await Deno.readTextFile(join(dir, name)));
    }
    assert.equal(outputs[0], outputs[1]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compactBundle: a file that is not JavaScript is refused and left as it was", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "bad.js");
    await Deno.writeTextFile(file, "export const = ;");
    await assert.rejects(() => compactBundle(file));
    assert.equal(await Deno.readTextFile(file), "export const = ;");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
