import assert from "node:assert/strict";
import fc from "fast-check";
import { FakeBlockBackend, GPT_TYPE, type GptTable } from "../../platform/block/mod.ts";
import { part } from "./fake_disks.ts";
import { isBootPartition, PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import { type RecordOnDisk, resetTargets, wipeRanges, wipeResetTargets } from "./reset_plan.ts";
import { FakeCryptBackend } from "../../platform/crypt/mod.ts";

const MiB = 1024 * 1024;
const DISK_GUID = "11111111-2222-4333-8444-555555555555";
const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 8);
const state = part(2, T.STATE, N.STATE, 9, 4);
const eph = part(3, T.EPHEMERAL, N.EPHEMERAL, 13, 8);
const data = part(4, GPT_TYPE.LINUX_FILESYSTEM, "DATA", 21, 4);
const table = (...partitions: GptTable["partitions"]): GptTable => ({
  diskGuid: DISK_GUID,
  partitions,
});
const record = (...ps: Array<typeof state>): RecordOnDisk => ({
  disk: "/dev/vda",
  diskGuid: DISK_GUID,
  partitions: ps.map(({ number, uuid, type, name, firstLba, lastLba }) => ({
    number,
    uuid,
    type,
    name,
    firstLba,
    lastLba,
  })),
});

Deno.test("resetTargets: the recorded STATE and EPHEMERAL with label, disk, GUID, size", () => {
  const got = resetTargets(record(state, eph), table(esp, state, eph, data), 512);
  assert.deepEqual(got.map((t) => [t.label, t.disk, t.sizeBytes]), [
    ["STATE", "/dev/vda", 4 * MiB],
    ["EPHEMERAL", "/dev/vda", 8 * MiB],
  ]);
  assert.deepEqual(got.map((t) => t.guid), [...got.map((t) => t.guid)].sort());
});

Deno.test("resetTargets: nothing without a record, nor for a foreign partition recorded", () => {
  assert.deepEqual(resetTargets(undefined, table(esp, state, eph), 512), []);
  assert.deepEqual(resetTargets(record(data), table(esp, state, eph, data), 512), []);
});

Deno.test("resetTargets never contains the ESP or a slot, whatever the record and table", () => {
  const types = [
    T.EFI_SYSTEM,
    T.BIOS_BOOT,
    T.BOOT_SLOT,
    T.STATE,
    T.EPHEMERAL,
    GPT_TYPE.LINUX_FILESYSTEM,
  ];
  const names = [N.EFI, N.BOOT_A, N.STATE, N.EPHEMERAL, "DATA"];
  const partition = fc.record({
    number: fc.integer({ min: 1, max: 8 }),
    type: fc.constantFrom(...types),
    name: fc.constantFrom(...names),
    start: fc.integer({ min: 1, max: 60 }),
    size: fc.integer({ min: 1, max: 8 }),
  }).map((p) =>
    part(
      p.number,
      p.type,
      p.name,
      p.start,
      p.size,
      `00000000-0000-4000-9000-00000000000${p.number}`,
    )
  );
  fc.assert(
    fc.property(
      fc.array(partition, { maxLength: 6 }),
      fc.array(partition, { maxLength: 6 }),
      (recorded, current) => {
        const got = resetTargets(record(...recorded), table(...current), 512);
        for (const t of got) {
          const p = current.find((c) => c.uuid === t.guid)!;
          assert.ok(
            !isBootPartition(p),
            `boot partition ${JSON.stringify(p)} in ${JSON.stringify(got)}`,
          );
          assert.ok(p.type === T.STATE || p.type === T.EPHEMERAL);
          assert.ok(recorded.some((r) => r.uuid === p.uuid));
        }
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("wipeRanges: first and last MiB of each, clipped for small partitions", () => {
  assert.deepEqual(wipeRanges([{ firstLba: 2048, lastLba: 2048 * 5 - 1 }], 512), [
    { offset: MiB, length: MiB },
    { offset: 4 * MiB, length: MiB },
  ]);
  assert.deepEqual(wipeRanges([{ firstLba: 2048, lastLba: 2048 + 1023 }], 512), [
    { offset: MiB, length: MiB / 2 },
  ]);
});

async function seededDisk() {
  const block = new FakeBlockBackend();
  block.addDisk("/dev/vda", 32 * MiB);
  await block.writeGpt("/dev/vda", table(esp, state, eph, data));
  const bytes = block.bytes("/dev/vda");
  for (const p of [esp, state, eph, data]) {
    bytes.fill(p.number * 17, p.firstLba * 512, (p.lastLba + 1) * 512);
  }
  return block;
}

const slice = (b: FakeBlockBackend, p: typeof state) =>
  b.bytes("/dev/vda").slice(p.firstLba * 512, (p.lastLba + 1) * 512);
const digest = async (b: Uint8Array<ArrayBuffer>) =>
  Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", b)));

Deno.test("wipeResetTargets removes only the consented, recorded partitions", async () => {
  const block = await seededDisk();
  const before = { esp: await digest(slice(block, esp)), data: await digest(slice(block, data)) };
  const guids = resetTargets(record(state, eph), table(esp, state, eph, data), 512).map((t) =>
    t.guid
  );
  const r = await wipeResetTargets(block, record(state, eph), guids);
  assert.deepEqual(r.wiped.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
  const after = await block.readGpt("/dev/vda");
  assert.deepEqual(after!.table.partitions.map((p) => p.name), ["EFI", "DATA"]);
  assert.equal(after!.table.diskGuid, DISK_GUID);
  assert.deepEqual(await digest(slice(block, esp)), before.esp);
  assert.deepEqual(await digest(slice(block, data)), before.data);
  const s = slice(block, state);
  assert.ok(s.subarray(0, MiB).every((b) => b === 0) && s.subarray(3 * MiB).every((b) => b === 0));
  assert.ok(s.subarray(MiB, 3 * MiB).every((b) => b === 2 * 17), "only the ends are zeroed");
});

Deno.test("wipeResetTargets: a GUID not consented to, or changed since, is kept", async () => {
  const block = await seededDisk();
  const r = await wipeResetTargets(block, record(state, eph), [state.uuid]);
  assert.deepEqual(r.wiped.map((t) => t.label), ["STATE"]);
  assert.deepEqual((await block.readGpt("/dev/vda"))!.table.partitions.map((p) => p.name), [
    "EFI",
    "EPHEMERAL",
    "DATA",
  ]);
  // A record naming an ESP GUID and a data disk's: nothing.
  const none = await wipeResetTargets(block, record(esp, data), [esp.uuid, data.uuid]);
  assert.deepEqual(none.wiped, []);
});

Deno.test("wipeResetTargets: a failed table write changes nothing", async () => {
  const block = await seededDisk();
  const before = await digest(block.bytes("/dev/vda").slice());
  block.faults.failNext("writeGpt", "EIO");
  await assert.rejects(
    wipeResetTargets(block, record(state, eph), [state.uuid, eph.uuid]),
    /Cannot write the partition table of "\/dev\/vda"/,
  );
  assert.deepEqual(await digest(block.bytes("/dev/vda").slice()), before);
});

Deno.test("wipeResetTargets crypto-erases a LUKS2 target before the table write", async () => {
  const block = await seededDisk();
  block.bytes("/dev/vda").set([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe], state.firstLba * 512);
  const crypt = new FakeCryptBackend();
  const statePath = `/dev/vda${state.number}`;
  await crypt.format(statePath, new TextEncoder().encode("first-key-123"), { slot: 0 });
  const r = await wipeResetTargets(block, record(state, eph), [state.uuid, eph.uuid], { crypt });
  assert.deepEqual(r.wiped.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
  assert.deepEqual(crypt.faults.callsOf("erase"), [[statePath]], "only the LUKS target");
  assert.equal(await crypt.isLuks(statePath), false);
});

Deno.test("wipeResetTargets: a failed header erase stops before the table is written", async () => {
  const block = await seededDisk();
  block.bytes("/dev/vda").set([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe], eph.firstLba * 512);
  const before = await digest(block.bytes("/dev/vda").slice());
  const crypt = new FakeCryptBackend();
  crypt.faults.failNext("erase", "EIO");
  await assert.rejects(
    wipeResetTargets(block, record(state, eph), [state.uuid, eph.uuid], { crypt }),
    /Cannot erase the LUKS2 header of "\/dev\/vda\d"/,
  );
  assert.deepEqual(await digest(block.bytes("/dev/vda").slice()), before);
});

Deno.test("wipeResetTargets closes an open mapping before erasing its header; one that will not close is named, erased anyway", async () => {
  const block = await seededDisk();
  for (const p of [state, eph]) {
    block.bytes("/dev/vda").set([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe], p.firstLba * 512);
  }
  const crypt = new FakeCryptBackend();
  const key = new TextEncoder().encode("first-key-123");
  const [sp, ep] = [`/dev/vda${state.number}`, `/dev/vda${eph.number}`];
  for (const [path, name] of [[sp, "STATE"], [ep, "EPHEMERAL"]]) {
    await crypt.format(path, key, { slot: 0 });
    await crypt.open(path, name, key);
  }
  crypt.faults.failNext("close", "EBUSY", { when: (args) => args[0] === "EPHEMERAL" });
  const r = await wipeResetTargets(block, record(state, eph), [state.uuid, eph.uuid], { crypt });
  const order = crypt.faults.calls.filter((c) => c.op === "close" || c.op === "erase")
    .map((c) => `${c.op} ${c.args[0]}`);
  const byNumber = [state, eph].sort((a, b) => a.number - b.number);
  const expected = byNumber.flatMap((p) =>
    p === state ? ["close STATE", `erase ${sp}`] : ["close EPHEMERAL", `erase ${ep}`]
  );
  assert.deepEqual(order, expected, "each mapping closed before its header is erased");
  assert.deepEqual(r.leftOpen, ["EPHEMERAL"]);
  assert.deepEqual([...crypt.mapped.keys()], ["EPHEMERAL"]);
  assert.equal(await crypt.isLuks(sp), false);
  assert.equal(await crypt.isLuks(ep), false);
});
