import assert from "node:assert/strict";
import fc from "fast-check";
import { crc32 } from "./crc32.ts";
import {
  applyWrites,
  bytesToGuid,
  encodeGpt,
  GPT_TYPE,
  type GptPartition,
  GptVerifyError,
  guidToBytes,
  imageReader,
  randomGuid,
  readGpt,
  verifyGpt,
} from "./gpt.ts";
import { sampleTable } from "./backend_conformance.ts";

const SIZE = 64 << 20;

Deno.test("gpt: CRC-32 check value", () => {
  assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
});

Deno.test("gpt: GUIDs use the mixed-endian layout", () => {
  const b = guidToBytes(GPT_TYPE.EFI_SYSTEM);
  assert.deepEqual(Array.from(b.subarray(0, 4)), [0x28, 0x73, 0x2a, 0xc1]);
  assert.equal(bytesToGuid(b), GPT_TYPE.EFI_SYSTEM);
  assert.throws(() => guidToBytes("nope"), TypeError);
});

Deno.test("gpt: round trip on an image, both header copies valid", async () => {
  for (const sectorSize of [512, 4096]) {
    const image = new Uint8Array(SIZE);
    const table = sampleTable();
    if (sectorSize === 4096) {
      for (const p of table.partitions) {
        p.firstLba /= 8;
        p.lastLba = (p.lastLba + 1) / 8 - 1;
      }
    }
    applyWrites(image, encodeGpt(table, SIZE, sectorSize));
    const got = await readGpt(imageReader(image), SIZE, sectorSize);
    assert.ok(got?.primaryValid && got.backupValid);
    assert.deepEqual(got.table, table);
    assert.equal(got.geometry.firstUsableLba, sectorSize === 512 ? 34 : 6);
  }
});

Deno.test("gpt: damaged entries fall back to the backup; both damaged is undefined", async () => {
  const image = new Uint8Array(SIZE);
  const table = sampleTable();
  applyWrites(image, encodeGpt(table, SIZE, 512));
  image[2 * 512 + 60] ^= 0xff; // primary entry array
  const got = await readGpt(imageReader(image), SIZE, 512);
  assert.equal(got?.primaryValid, false);
  assert.deepEqual(got?.table, table);
  image[SIZE - 512 + 30] ^= 0xff; // backup header
  assert.equal(await readGpt(imageReader(image), SIZE, 512), undefined);
});

Deno.test("gpt: verifyGpt accepts a fresh table and returns both headers", async () => {
  const image = new Uint8Array(SIZE);
  const table = sampleTable();
  applyWrites(image, encodeGpt(table, SIZE, 512));
  const got = await verifyGpt(imageReader(image), SIZE, 512);
  assert.deepEqual(got.table, table);
  const last = SIZE / 512 - 1;
  assert.deepEqual(
    [got.primary.myLba, got.primary.altLba, got.primary.entriesLba],
    [1, last, 2],
  );
  assert.deepEqual([got.backup.myLba, got.backup.altLba, got.backup.entriesLba], [
    last,
    1,
    last - 32,
  ]);
  assert.equal(got.primary.entriesCrc, got.backup.entriesCrc);
  assert.deepEqual([got.primary.firstUsable, got.primary.lastUsable], [34, last - 33]);
});

Deno.test("gpt: verifyGpt names the first check a damaged table fails", async () => {
  const fresh = () => {
    const image = new Uint8Array(SIZE);
    applyWrites(image, encodeGpt(sampleTable(), SIZE, 512));
    return image;
  };
  const fails = async (image: Uint8Array, check: GptVerifyError["check"], size = SIZE) => {
    await assert.rejects(
      () => verifyGpt(imageReader(image), size, 512),
      (e) => e instanceof GptVerifyError && e.check === check,
      check,
    );
  };
  const noMbr = fresh();
  noMbr[511] = 0;
  await fails(noMbr, "protective-mbr");
  const primary = fresh();
  primary[2 * 512 + 60] ^= 0xff;
  await fails(primary, "primary");
  const backup = fresh();
  backup[SIZE - 512 + 30] ^= 0xff;
  await fails(backup, "backup");
  // A table written for a smaller disk: the backup is not on the last LBA.
  const grown = new Uint8Array(2 * SIZE);
  grown.set(fresh());
  await fails(grown, "backup-location", 2 * SIZE);
  // Both copies valid on their own, but describing different tables.
  const mixed = fresh();
  const other = sampleTable();
  other.partitions[0].name = "OTHER";
  const backupWrites = encodeGpt(other, SIZE, 512).slice(3);
  applyWrites(mixed, backupWrites);
  await fails(mixed, "copies-differ");
  assert.ok((await readGpt(imageReader(mixed), SIZE, 512))?.backupValid, "lenient read accepts it");
});

Deno.test("gpt: rejects overlapping, out-of-range and duplicate partitions", () => {
  const bad = (mut: (p: GptPartition[]) => void) => {
    const t = sampleTable();
    mut(t.partitions);
    assert.throws(() => encodeGpt(t, SIZE, 512), RangeError);
  };
  bad((p) => p[1].firstLba = p[0].lastLba);
  bad((p) => p[0].firstLba = 10);
  bad((p) => p[1].lastLba = SIZE / 512);
  bad((p) => p[1].number = 1);
  bad((p) => p[0].name = "x".repeat(37));
  assert.throws(() => encodeGpt(sampleTable(), 8192, 512), RangeError);
});

Deno.test("gpt: arbitrary tables round-trip", async () => {
  const image = new Uint8Array(8 << 20);
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: 128 }), { maxLength: 6 }),
      fc.string({ maxLength: 36 }),
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      async (numbers, name, attributes) => {
        image.fill(0);
        const partitions = numbers.map((number, i): GptPartition => ({
          number,
          type: randomGuid(),
          uuid: randomGuid(),
          firstLba: 2048 + i * 1024,
          lastLba: 2048 + i * 1024 + 1023,
          name,
          attributes,
        })).sort((a, b) => a.number - b.number);
        const table = { diskGuid: randomGuid(), partitions };
        applyWrites(image, encodeGpt(table, image.length, 512));
        const got = await readGpt(imageReader(image), image.length, 512);
        assert.deepEqual(got?.table, table);
      },
    ),
    { numRuns: 50 },
  );
});

async function have(cmd: string): Promise<boolean> {
  return await Deno.stat(`/usr/sbin/${cmd}`).then(() => true, () => false);
}
const haveSgdisk = await have("sgdisk") && await have("sfdisk");

async function run(cmd: string, args: string[]) {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `${cmd} ${args.join(" ")}: ${text}`);
  return text;
}

Deno.test({
  name: "gpt: sgdisk and sfdisk accept what we write, and we read what they write " +
    "(needs sgdisk from gdisk, sfdisk from fdisk)",
  ignore: !haveSgdisk,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "gpt-" });
  const file = `${dir}/disk.img`;
  try {
    const image = new Uint8Array(SIZE);
    const table = sampleTable();
    applyWrites(image, encodeGpt(table, SIZE, 512));
    await Deno.writeFile(file, image);
    assert.match(await run("sgdisk", ["-v", file]), /No problems found/);
    const dump = JSON.parse(await run("sfdisk", ["--json", file])).partitiontable;
    assert.equal(dump.label, "gpt");
    assert.equal(dump.id.toLowerCase(), table.diskGuid);
    assert.deepEqual(
      dump.partitions.map((p: Record<string, unknown>) => [
        p.start,
        p.size,
        String(p.type).toLowerCase(),
        String(p.uuid).toLowerCase(),
        p.name,
      ]),
      table.partitions.map((p) => [
        p.firstLba,
        p.lastLba - p.firstLba + 1,
        p.type,
        p.uuid,
        p.name,
      ]),
    );
    // And the other way round.
    await Deno.writeFile(file, new Uint8Array(SIZE));
    await run("sgdisk", [
      "-n",
      "1:2048:+8M",
      "-t",
      "1:ef00",
      "-c",
      "1:ESP",
      "-n",
      "3:0:+4M",
      "-t",
      "3:8300",
      "-c",
      "3:ROOT-Ü",
      "-A",
      "3:set:2",
      file,
    ]);
    const got = await readGpt(imageReader(await Deno.readFile(file)), SIZE, 512);
    assert.ok(got?.primaryValid && got.backupValid);
    const [esp, root] = got.table.partitions;
    assert.deepEqual([esp.number, esp.type, esp.name, esp.firstLba, esp.lastLba], [
      1,
      GPT_TYPE.EFI_SYSTEM,
      "ESP",
      2048,
      2048 + 8 * 2048 - 1,
    ]);
    assert.deepEqual([root.number, root.type, root.name, root.attributes], [
      3,
      GPT_TYPE.LINUX_FILESYSTEM,
      "ROOT-Ü",
      4n,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
