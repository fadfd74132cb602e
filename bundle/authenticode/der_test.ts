import assert from "node:assert/strict";
import { derChildren, derElement, MAX_DER_CHILDREN } from "./der.ts";

Deno.test("short and long lengths are read; the element must fit", () => {
  assert.deepEqual(derElement(Uint8Array.of(0x04, 0x02, 1, 2)), {
    tag: 4,
    at: 0,
    contentAt: 2,
    end: 4,
  });
  const long = new Uint8Array(4 + 300);
  long.set([0x04, 0x82, 0x01, 0x2c]);
  assert.deepEqual(derElement(long), { tag: 4, at: 0, contentAt: 4, end: 304 });
  assert.equal(derElement(long.subarray(0, 303)), undefined);
  assert.equal(derElement(Uint8Array.of(0x30)), undefined);
});

Deno.test("indefinite lengths, lengths over 4 bytes and multi-byte tags are refused", () => {
  assert.equal(derElement(Uint8Array.of(0x30, 0x80, 0, 0)), undefined);
  assert.equal(derElement(Uint8Array.of(0x04, 0x85, 0, 0, 0, 0, 1, 9)), undefined);
  assert.equal(derElement(Uint8Array.of(0x1f, 0x01, 0)), undefined);
});

Deno.test("children must tile their parent exactly, and are capped", () => {
  const seq = Uint8Array.of(0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0x07);
  const kids = derChildren(seq, derElement(seq)!)!;
  assert.deepEqual(kids.map((k) => [k.tag, k.at, k.end]), [[2, 2, 5], [4, 5, 8]]);
  const ragged = Uint8Array.of(0x30, 0x04, 0x02, 0x01, 0x05, 0x04);
  assert.equal(derChildren(ragged, derElement(ragged)!), undefined);
  const many = new Uint8Array(3 + 2 * (MAX_DER_CHILDREN + 1));
  many.set([0x30, 0x81, many.length - 3]);
  for (let i = 3; i < many.length; i += 2) many.set([0x05, 0x00], i);
  assert.equal(derChildren(many, derElement(many)!), undefined);
});
