import assert from "node:assert/strict";
import { anonSplitOf } from "./proc.ts";

Deno.test("anonymous memory split: the brk heap, small unnamed maps (V8 pages), the rest", () => {
  const map = (from: number, kib: number, name: string, anon: number) =>
    [
      `${from.toString(16)}-${(from + kib * 1024).toString(16)} rw-p 00000000 00:00 0      ${name}`,
      `Size:           ${kib} kB`,
      `Rss:            ${anon} kB`,
      `Anonymous:      ${anon} kB`,
    ].join("\n");
  const smaps = [
    map(0x1000000, 40960, "[heap]", 30000),
    map(0x8000000, 256, "", 200),
    map(0x9000000, 256, "", 56),
    map(0xa000000, 128, "/usr/lib/libc.so.6", 8),
    map(0xb000000, 65536, "", 1000),
    map(0xf000000, 132, "[stack]", 20),
  ].join("\n");
  assert.deepEqual(anonSplitOf(smaps), { brkKiB: 30000, smallMapsKiB: 256, otherMapsKiB: 1028 });
  assert.deepEqual(anonSplitOf(""), { brkKiB: 0, smallMapsKiB: 0, otherMapsKiB: 0 });
});
