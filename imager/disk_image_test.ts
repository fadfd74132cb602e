import assert from "node:assert/strict";
import {
  applyWrites,
  GPT_TYPE,
  GptVerifyError,
  imageReader,
  readGpt,
  verifyGpt,
} from "../platform/block/mod.ts";
import {
  isBootPartition,
  PARTITION_NAME,
  PARTITION_TYPE,
  partitionRole,
  readImageGpt,
  SECTOR_SIZE,
  writeGptToImage,
} from "../layout/mod.ts";
import { ESP_FIRST_LBA, planDisk } from "./disk_image.ts";

const DISK = "11111111-2222-4333-8444-555555555555";
const PART = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const SIZE = 64 << 20;
const total = SIZE / SECTOR_SIZE;
const spec = { size: BigInt(SIZE), espSize: 16n << 20n, diskGuid: DISK, espGuid: PART };

/** The imager's GPT for a 64 MiB disk with a 16 MiB ESP, in memory. */
function image(): Uint8Array {
  const bytes = new Uint8Array(SIZE);
  applyWrites(bytes, planDisk(spec).writes);
  return bytes;
}

async function rejectsWith(bytes: Uint8Array, check: GptVerifyError["check"]): Promise<void> {
  await assert.rejects(
    () => verifyGpt(imageReader(bytes), SIZE, SECTOR_SIZE),
    (e) => e instanceof GptVerifyError && e.check === check,
  );
}

Deno.test("the image's GPT: protective MBR, valid CRCs, one aligned ESP the provisioner recognises", async () => {
  const bytes = image();
  const v = new DataView(bytes.buffer);
  assert.deepEqual([bytes[510], bytes[511], bytes[450]], [0x55, 0xaa, 0xee]);
  assert.equal(v.getUint32(454, true), 1);
  assert.equal(v.getUint32(458, true), total - 1);

  const { table, primary, geometry } = await verifyGpt(imageReader(bytes), SIZE, SECTOR_SIZE);
  assert.equal(primary.myLba, 1);
  assert.equal(primary.altLba, total - 1);
  assert.equal(primary.entriesLba, 2);
  assert.equal(primary.firstUsable, 34);
  assert.equal(primary.lastUsable, total - 34);
  assert.equal(geometry.lastUsableLba, total - 34);
  assert.equal(table.diskGuid, DISK);
  assert.equal(table.partitions.length, 1);
  const [esp] = table.partitions;
  assert.equal(esp.type, GPT_TYPE.EFI_SYSTEM);
  assert.equal(esp.type, PARTITION_TYPE.EFI_SYSTEM);
  assert.equal(esp.uuid, PART);
  assert.equal(esp.name, "EFI");
  assert.equal(esp.name, PARTITION_NAME.EFI);
  assert.equal(esp.firstLba, ESP_FIRST_LBA);
  assert.equal(esp.firstLba % 2048, 0);
  assert.equal(esp.lastLba, ESP_FIRST_LBA + 32768 - 1);
  assert.equal(partitionRole(esp), "efi");
  assert.ok(isBootPartition(esp));
});

Deno.test("planDisk reports the ESP's place and the free space left", () => {
  const { layout } = planDisk(spec);
  assert.equal(layout.espOffset, 1n << 20n);
  assert.equal(layout.espSize, 16n << 20n);
  assert.equal(layout.totalSectors, BigInt(total));
  assert.equal(layout.free, BigInt((total - 34 - (ESP_FIRST_LBA + 32768 - 1)) * SECTOR_SIZE));
});

Deno.test("the backup header sits in the last sector and points back at the primary", async () => {
  const { writes } = planDisk(spec);
  const end = Math.max(...writes.map((w) => w.offset + w.data.length));
  assert.equal(end, SIZE);
  const bytes = image();
  const { backup } = await verifyGpt(imageReader(bytes), SIZE, SECTOR_SIZE);
  assert.equal(backup.myLba, total - 1);
  assert.equal(backup.altLba, 1);
  assert.equal(backup.entriesLba, total - 33);
  // The backup copy alone decodes to the same ESP.
  bytes.fill(0, 0, 34 * SECTOR_SIZE);
  const fromBackup = await readGpt(imageReader(bytes), SIZE, SECTOR_SIZE);
  assert.equal(fromBackup?.primaryValid, false);
  assert.equal(fromBackup?.backupValid, true);
  assert.equal(fromBackup?.table.partitions[0].name, "EFI");
});

Deno.test("a flipped byte in either header or array is caught by its CRC", async () => {
  const header = image();
  header[SECTOR_SIZE + 40] ^= 1;
  await rejectsWith(header, "primary");
  const array = image();
  array[2 * SECTOR_SIZE + 60] ^= 1;
  await rejectsWith(array, "primary");
  const backupHeader = image();
  backupHeader[SIZE - SECTOR_SIZE + 40] ^= 1;
  await rejectsWith(backupHeader, "backup");
  const backupArray = image();
  backupArray[SIZE - 33 * SECTOR_SIZE + 60] ^= 1;
  await rejectsWith(backupArray, "backup");
  const mbr = image();
  mbr[450] = 0x83;
  await rejectsWith(mbr, "protective-mbr");
});

Deno.test("planDisk rejects an ESP that does not fit the disk", () => {
  assert.throws(() => planDisk({ ...spec, espSize: BigInt(SIZE) }), RangeError);
  // The last usable LBA is the limit: 33 sectors of backup after it.
  const fits = BigInt((total - 34 - ESP_FIRST_LBA + 1) * SECTOR_SIZE);
  planDisk({ ...spec, espSize: fits });
  assert.throws(() => planDisk({ ...spec, espSize: fits + 512n }), RangeError);
  assert.throws(() => planDisk({ ...spec, espSize: 0n }), RangeError);
});

Deno.test("readImageGpt verifies a table written to a sparse file, and a file grown after", async () => {
  const path = await Deno.makeTempFile({ suffix: ".img" });
  try {
    {
      using f = await Deno.open(path, { write: true });
      await f.truncate(SIZE);
    }
    await writeGptToImage(path, planDisk(spec).writes);
    const read = await readImageGpt(path);
    assert.equal(read.table.partitions.length, 1);
    assert.equal(read.backup.myLba, total - 1);
    assert.ok((await Deno.stat(path)).blocks! * 512 < SIZE / 4, "the image stays sparse");
    {
      using f = await Deno.open(path, { write: true });
      await f.truncate(2 * SIZE);
    }
    await assert.rejects(
      () => readImageGpt(path),
      (e) => e instanceof GptVerifyError && e.check === "backup-location",
    );
  } finally {
    await Deno.remove(path);
  }
});

const haveSgdisk = await Deno.stat("/usr/sbin/sgdisk").then(() => true, () => false);

Deno.test({
  name: "sgdisk finds no problem in the image's GPT (needs sgdisk from gdisk)",
  ignore: !haveSgdisk,
}, async () => {
  const path = await Deno.makeTempFile({ suffix: ".img" });
  try {
    await Deno.writeFile(path, image());
    const out = await new Deno.Command("sgdisk", { args: ["-v", path], stdout: "piped" }).output();
    assert.match(new TextDecoder().decode(out.stdout), /No problems found/);
    const info = await new Deno.Command("sgdisk", { args: ["-i", "1", path], stdout: "piped" })
      .output();
    const text = new TextDecoder().decode(info.stdout);
    assert.match(text, /C12A7328-F81F-11D2-BA4B-00A0C93EC93B/);
    assert.match(text, /Partition name: 'EFI'/);
    assert.match(text, /First sector: 2048 /);
  } finally {
    await Deno.remove(path);
  }
});
