import assert from "node:assert/strict";
import {
  decodeMbr,
  encodeMbr,
  hybridMbr,
  hybridMbrToKeep,
  keepHybridMbr,
  MBR_TYPE_FAT32_LBA,
  MBR_TYPE_GPT,
} from "./hybrid_mbr.ts";
import { encodeGpt, GPT_TYPE, gptGeometry, type GptTable, protectiveMbr } from "./gpt.ts";
import { FakeBlockBackend } from "./backend_fake.ts";

const DISK = 64 << 20;
const boot = { type: MBR_TYPE_FAT32_LBA, firstLba: 2048, sectors: 65536 };
const table = (extra = true): GptTable => ({
  diskGuid: "11111111-2222-3333-4444-555555555555",
  partitions: [
    {
      number: 1,
      type: GPT_TYPE.EFI_SYSTEM,
      uuid: "aaaaaaaa-2222-3333-4444-555555555555",
      name: "EFI",
      firstLba: 2048,
      lastLba: 2048 + 65536 - 1,
      attributes: 0n,
    },
    ...(extra
      ? [{
        number: 2,
        type: GPT_TYPE.LINUX_FILESYSTEM,
        uuid: "bbbbbbbb-2222-3333-4444-555555555555",
        name: "STATE",
        firstLba: 70000,
        lastLba: 80000,
        attributes: 0n,
      }]
      : []),
  ],
});

Deno.test("hybridMbr lists the boot FAT first, then 0xEE over the GPT's sectors", () => {
  const mbr = hybridMbr([boot], 2048, 0x12345678);
  assert.deepEqual(decodeMbr(mbr), [
    { ...boot, bootable: false },
    { type: MBR_TYPE_GPT, firstLba: 1, sectors: 2047, bootable: false },
  ]);
  assert.deepEqual([mbr[440], mbr[443]], [0x78, 0x12]);
  assert.deepEqual([mbr[510], mbr[511]], [0x55, 0xaa]);
});

Deno.test("encodeMbr refuses a fifth entry and a value past 32 bits", () => {
  assert.throws(() => encodeMbr([boot, boot, boot, boot, boot]), RangeError);
  assert.throws(() => encodeMbr([{ ...boot, firstLba: 2 ** 32 }]), RangeError);
});

Deno.test("a hybrid MBR whose entries are partitions of the new table is kept", () => {
  const mbr = hybridMbr([boot], 2048);
  assert.deepEqual(hybridMbrToKeep(mbr, table()), mbr);
});

Deno.test("a protective MBR, a moved boot partition or a plain MBR is not kept", () => {
  const g = gptGeometry(DISK, 512);
  assert.equal(hybridMbrToKeep(protectiveMbr(g), table()), undefined);
  const moved = hybridMbr([{ ...boot, firstLba: 4096 }], 2048);
  assert.equal(hybridMbrToKeep(moved, table()), undefined);
  const plain = encodeMbr([boot]);
  assert.equal(hybridMbrToKeep(plain, table()), undefined);
  assert.equal(hybridMbrToKeep(new Uint8Array(512), table()), undefined);
});

Deno.test("keepHybridMbr swaps only the write at offset 0", () => {
  const mbr = hybridMbr([boot], 2048);
  const writes = encodeGpt(table(), DISK, 512);
  const kept = keepHybridMbr(mbr, table(), writes);
  assert.deepEqual(kept[0].data, mbr);
  assert.deepEqual(kept.slice(1), writes.slice(1));
});

Deno.test("writeGpt keeps a Pi image's hybrid MBR when STATE is appended (fake backend)", async () => {
  const disks = new FakeBlockBackend();
  disks.addDisk("/dev/mmcblk0", DISK);
  await disks.writeGpt("/dev/mmcblk0", table(false));
  await disks.write("/dev/mmcblk0", 0, hybridMbr([boot], 2048));
  await disks.writeGpt("/dev/mmcblk0", table());
  const sector0 = await disks.read("/dev/mmcblk0", 0, 512);
  assert.equal(decodeMbr(sector0)?.[0].type, MBR_TYPE_FAT32_LBA);
  const gpt = await disks.readGpt("/dev/mmcblk0");
  assert.deepEqual(gpt?.table.partitions.map((p) => p.name), ["EFI", "STATE"]);
});

Deno.test("writeGpt writes a protective MBR over a hybrid one that no longer matches", async () => {
  const disks = new FakeBlockBackend();
  disks.addDisk("/dev/sda", DISK);
  await disks.write("/dev/sda", 0, hybridMbr([{ ...boot, firstLba: 4096 }], 2048));
  await disks.writeGpt("/dev/sda", table());
  const entries = decodeMbr(await disks.read("/dev/sda", 0, 512));
  assert.deepEqual(entries?.map((e) => e.type), [MBR_TYPE_GPT]);
});
