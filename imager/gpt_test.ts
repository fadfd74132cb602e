import assert from "node:assert/strict";
import { crc32 } from "./crc32.ts";
import {
  ALIGN_SECTORS,
  alignUp,
  buildGpt,
  decodeGuid,
  encodeGuid,
  ESP_TYPE_GUID,
  firstUsableLba,
  guidFromSeed,
  lastUsableLba,
  SECTOR_SIZE,
} from "./gpt.ts";
import { decodeGptArray, decodeGptHeader, GptFormatError, readGpt } from "./gpt_decode.ts";

const DISK = "11111111-2222-4333-8444-555555555555";
const PART = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE";
const total = (64n * 1024n * 1024n) / 512n;

function layout() {
  return {
    totalSectors: total,
    diskGuid: DISK,
    partitions: [{
      typeGuid: ESP_TYPE_GUID,
      uniqueGuid: PART,
      name: "EFI",
      firstLba: 2048n,
      lastLba: 2048n + 32768n - 1n,
    }],
  };
}

Deno.test("crc32 matches the standard check value", () => {
  assert.deepEqual(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
});

Deno.test("GUIDs round-trip through GPT's mixed-endian encoding", () => {
  const bytes = encodeGuid(ESP_TYPE_GUID);
  assert.deepEqual(Array.from(bytes.subarray(0, 4)), [0x28, 0x73, 0x2a, 0xc1]);
  assert.deepEqual(decodeGuid(bytes), ESP_TYPE_GUID);
  assert.throws(() => encodeGuid("nope"), TypeError);
});

Deno.test("guidFromSeed is stable and version-4 shaped", async () => {
  const a = await guidFromSeed("machined-disk");
  assert.deepEqual(a, await guidFromSeed("machined-disk"));
  assert(a !== await guidFromSeed("other"));
  assert.deepEqual(a[14], "4");
});

Deno.test("buildGpt writes a protective MBR, headers with valid CRCs and one ESP entry", () => {
  const gpt = buildGpt(layout());
  const mbr = gpt.head.subarray(0, SECTOR_SIZE);
  assert.deepEqual([mbr[510], mbr[511], mbr[450]], [0x55, 0xaa, 0xee]);
  assert.deepEqual(new DataView(mbr.buffer).getUint32(454, true), 1);
  assert.deepEqual(new DataView(mbr.buffer).getUint32(458, true), Number(total - 1n));

  const primary = decodeGptHeader(gpt.head.subarray(SECTOR_SIZE, 2 * SECTOR_SIZE));
  assert.deepEqual(primary.myLba, 1n);
  assert.deepEqual(primary.alternateLba, total - 1n);
  assert.deepEqual(primary.arrayLba, 2n);
  assert.deepEqual(primary.firstUsableLba, firstUsableLba());
  assert.deepEqual(primary.lastUsableLba, lastUsableLba(total));
  assert.deepEqual(primary.diskGuid, DISK);
  const parts = decodeGptArray(gpt.head.subarray(2 * SECTOR_SIZE), primary);
  assert.deepEqual(parts.length, 1);
  assert.deepEqual(parts[0].typeGuid, ESP_TYPE_GUID);
  assert.deepEqual(parts[0].uniqueGuid, PART);
  assert.deepEqual(parts[0].name, "EFI");
  assert.deepEqual(parts[0].firstLba % BigInt(ALIGN_SECTORS), 0n);
});

Deno.test("the backup header sits in the last sector and points back at the primary", () => {
  const gpt = buildGpt(layout());
  assert.deepEqual(gpt.tailOffset + BigInt(gpt.tail.length), total * 512n);
  const backup = decodeGptHeader(gpt.tail.subarray(gpt.tail.length - SECTOR_SIZE));
  assert.deepEqual(backup.myLba, total - 1n);
  assert.deepEqual(backup.alternateLba, 1n);
  assert.deepEqual(backup.arrayLba, total - 33n);
  const parts = decodeGptArray(gpt.tail.subarray(0, 32 * SECTOR_SIZE), backup);
  assert.deepEqual(parts[0].name, "EFI");
});

Deno.test("a flipped byte is caught by the header CRC", () => {
  const gpt = buildGpt(layout());
  const header = gpt.head.slice(SECTOR_SIZE, 2 * SECTOR_SIZE);
  header[40] ^= 1;
  assert.throws(() => decodeGptHeader(header), GptFormatError);
  const primary = decodeGptHeader(gpt.head.subarray(SECTOR_SIZE, 2 * SECTOR_SIZE));
  const array = gpt.head.slice(2 * SECTOR_SIZE);
  array[60] ^= 1;
  assert.throws(() => decodeGptArray(array, primary), GptFormatError);
});

Deno.test("buildGpt rejects partitions outside the usable area or overlapping", () => {
  const bad = layout();
  bad.partitions[0].lastLba = total;
  assert.throws(() => buildGpt(bad), RangeError);
  const overlap = layout();
  overlap.partitions.push({ ...overlap.partitions[0], name: "X", firstLba: 4096n });
  assert.throws(() => buildGpt(overlap), RangeError);
});

Deno.test("alignUp rounds to 1 MiB boundaries", () => {
  assert.deepEqual(alignUp(34n), 2048n);
  assert.deepEqual(alignUp(2048n), 2048n);
  assert.deepEqual(alignUp(2049n), 4096n);
});

Deno.test("readGpt verifies a table written to a sparse file", async () => {
  const path = await Deno.makeTempFile({ suffix: ".img" });
  try {
    const gpt = buildGpt(layout());
    using f = await Deno.open(path, { write: true });
    await f.truncate(Number(total * 512n));
    await f.write(gpt.head);
    await f.seek(gpt.tailOffset, Deno.SeekMode.Start);
    await f.write(gpt.tail);
    const read = await readGpt(path);
    assert.deepEqual(read.partitions.length, 1);
    assert.deepEqual(read.backup.myLba, total - 1n);
  } finally {
    await Deno.remove(path);
  }
});
