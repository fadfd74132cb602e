import assert from "node:assert/strict";
import { crc32 } from "./crc32.ts";

/** The reflected table-driven CRC-32, as the GPT specification gives it. */
function reference(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

Deno.test("crc32: the check value, empty input, and agreement with the reference on random arrays", () => {
  assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  for (const size of [1, 92, 512, 16384]) {
    const data = crypto.getRandomValues(new Uint8Array(size));
    assert.equal(crc32(data), reference(data));
    assert.equal(crc32(data.subarray(3)), reference(data.subarray(3)));
  }
});
