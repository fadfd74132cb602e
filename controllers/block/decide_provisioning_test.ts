import assert from "node:assert/strict";
import fc from "fast-check";
import { encodeGpt, GPT_TYPE, type GptPartition } from "../../platform/block/mod.ts";
import {
  classifyDisk,
  decideProvisioning,
  type ProvisioningDecision,
  type ProvisioningPlan,
} from "./decide_provisioning.ts";
import { diskFacts, ext4Head, part, sequentialGuids, TEST_LAYOUT } from "./fake_disks.ts";
import { isBootPartition, PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import type { PartitionFacts } from "./disk_facts.ts";

const MiB = 1024 * 1024;
const install = { disk: "/dev/vda", wipe: false };
const wipe = { disk: "/dev/vda", wipe: true };
const ext4 = { type: "ext4" as const, label: "X", uuid: "u" };
const esp = () => ({
  ...part(1, T.EFI_SYSTEM, N.EFI, 1, 8),
  fs: { ...ext4, type: "vfat" as const },
});
const ours = () => [
  { ...part(2, T.STATE, N.STATE, 9, 4), fs: { ...ext4, label: "STATE" } },
  { ...part(3, T.EPHEMERAL, N.EPHEMERAL, 13, 40), fs: { ...ext4, label: "EPHEMERAL" } },
];
const foreign = () => ({ ...part(1, GPT_TYPE.LINUX_FILESYSTEM, "data", 1, 30), fs: ext4 });

function decide(
  facts: Parameters<typeof decideProvisioning>[0],
  request = install,
): ProvisioningDecision {
  return decideProvisioning(facts, TEST_LAYOUT, request, { newGuid: sequentialGuids() });
}

function asPlan(d: ProvisioningDecision, action: ProvisioningPlan["action"]): ProvisioningPlan {
  assert.equal(d.action, action, `expected ${action}, got ${JSON.stringify(d, bigints)}`);
  return d as ProvisioningPlan;
}

function bigints(_k: string, v: unknown) {
  return typeof v === "bigint" ? String(v) : v;
}

function overlaps(plan: ProvisioningPlan, p: GptPartition, sector = 512): boolean {
  const a = p.firstLba * sector, b = (p.lastLba + 1) * sector;
  return plan.zero.some((r) => r.offset < b && a < r.offset + r.length);
}

/** Boot partitions come through unchanged, are never zeroed, and the table encodes. */
function assertBootKept(plan: ProvisioningPlan, boot: GptPartition[], size = 64 * MiB): void {
  for (const b of boot) {
    const { number, type, uuid, firstLba, lastLba, name, attributes } = b;
    const plain = { number, type, uuid, firstLba, lastLba, name, attributes };
    assert.deepEqual(plan.table.partitions.find((p) => p.uuid === b.uuid), plain);
    assert.ok(!overlaps(plan, b), `zero range over boot partition ${b.name}`);
    assert.ok(!plan.removed.some((p) => p.uuid === b.uuid));
  }
  encodeGpt(plan.table, size, 512);
}

Deno.test("missing disk: refuse", () => {
  const d = decide(undefined, wipe);
  assert.equal(d.action, "refuse");
  assert.equal(d.action === "refuse" && d.code, "missing");
});

Deno.test("read-only disk: refuse, even with our layout or wipe", () => {
  for (const f of [diskFacts({ readOnly: true }), diskFacts({ readOnly: true, gpt: ours() })]) {
    const d = decide(f, wipe);
    assert.equal(d.action === "refuse" && d.code, "read-only");
  }
});

Deno.test("our layout present: leave, whatever wipe says", () => {
  for (const req of [install, wipe]) {
    const d = decide(diskFacts({ gpt: [esp(), ...ours()] }), req);
    assert.equal(d.action, "leave");
    assert.ok(d.action === "leave" && d.format.length === 0 && d.state.name === "STATE");
  }
});

Deno.test("our layout with a blank, never formatted EPHEMERAL: leave and format only it", () => {
  const [state, eph] = ours();
  const d = decide(diskFacts({ gpt: [esp(), state, { ...eph, fs: undefined, blank: true }] }));
  assert.equal(d.action, "leave");
  assert.deepEqual(d.action === "leave" && d.format.map((p) => p.name), ["EPHEMERAL"]);
});

Deno.test("our layout but STATE holds unknown data: refuse, never format it", () => {
  const [state, eph] = ours();
  const d = decide(diskFacts({ gpt: [{ ...state, fs: undefined, blank: false }, eph] }), wipe);
  assert.equal(d.action === "refuse" && d.code, "unrecognized-data");
});

Deno.test("our layout with a LUKS2 STATE: leave it (never format or wipe it); decide_encryption opens it", () => {
  const [state, eph] = ours();
  const luks = { type: "crypto_LUKS" as const, label: "STATE", uuid: "2a7c0e1d" };
  for (const req of [install, wipe]) {
    const d = decide(diskFacts({ gpt: [esp(), { ...state, fs: luks }, eph] }), req);
    assert.equal(d.action, "leave");
    assert.deepEqual(d.action === "leave" && d.format, []);
  }
});

Deno.test("freshly flashed image (ESP only): complete, appending STATE and EPHEMERAL", () => {
  const boot = esp();
  const plan = asPlan(decide(diskFacts({ gpt: [boot] })), "complete");
  assertBootKept(plan, [boot]);
  const { state, ephemeral } = plan.created;
  assert.deepEqual([state.number, state.name, state.type], [2, "STATE", T.STATE]);
  assert.deepEqual([ephemeral.number, ephemeral.name, ephemeral.type], [
    3,
    "EPHEMERAL",
    T.EPHEMERAL,
  ]);
  assert.equal(state.firstLba, 9 * 2048, "STATE starts at the first aligned LBA after the ESP");
  assert.equal((state.lastLba - state.firstLba + 1) * 512, TEST_LAYOUT.stateSize);
  assert.equal(ephemeral.firstLba, 13 * 2048);
  // EPHEMERAL runs to the last 1 MiB boundary before the last usable LBA, so its size
  // divides by any LUKS2 sector size (QEMU found luksFormat refusing the unaligned tail).
  assert.equal(ephemeral.lastLba, 63 * 2048 - 1, "EPHEMERAL ends on the last whole MiB");
  assert.equal((ephemeral.lastLba - ephemeral.firstLba + 1) % 8, 0, "a multiple of 4096 bytes");
  assert.deepEqual(plan.removed, []);
  assert.deepEqual(plan.zero, [
    { offset: state.firstLba * 512, length: TEST_LAYOUT.zeroBytes },
    { offset: ephemeral.firstLba * 512, length: TEST_LAYOUT.zeroBytes },
  ]);
  assert.equal(plan.table.diskGuid, "11111111-2222-4333-8444-555555555555", "disk GUID kept");
});

Deno.test("image with ESP and A/B slot partitions: complete, keeping all three", () => {
  const boot = [
    esp(),
    part(2, T.BOOT_SLOT, N.BOOT_A, 9, 8),
    part(3, T.BOOT_SLOT, N.BOOT_B, 17, 8),
  ];
  const plan = asPlan(decide(diskFacts({ gpt: boot })), "complete");
  assertBootKept(plan, boot);
  assert.deepEqual([plan.created.state.number, plan.created.ephemeral.number], [4, 5]);
  assert.equal(plan.created.state.firstLba, 25 * 2048);
});

Deno.test("blank disk or empty GPT: create", () => {
  const blank = asPlan(decide(diskFacts({ blank: true })), "create");
  assert.equal(blank.created.state.firstLba, 2048);
  assert.equal(blank.table.diskGuid, "00000000-0000-4000-8000-000000000003", "new disk GUID");
  asPlan(decide(diskFacts({ gpt: [] })), "create");
});

Deno.test("foreign partitions: refuse unless wipe; wipe removes them and zeroes their ends", () => {
  const data = foreign();
  const r = decide(diskFacts({ gpt: [data] }));
  assert.equal(r.action === "refuse" && r.code, "foreign-data");
  assert.match(r.reason, /partitions 1 \(data\).*machine\.install\.wipe/);
  const plan = asPlan(decide(diskFacts({ gpt: [data] }), wipe), "wipe");
  assert.deepEqual(plan.removed.map((p) => p.uuid), [data.uuid]);
  assert.deepEqual(plan.kept, []);
  assert.deepEqual(plan.table.partitions.map((p) => p.name), ["STATE", "EPHEMERAL"]);
  const head = data.firstLba * 512, end = (data.lastLba + 1) * 512;
  assert.ok(plan.zero.some((z) => z.offset === head));
  assert.ok(plan.zero.some((z) => z.offset + z.length === end));
  assert.ok(plan.zero.some((z) => z.offset === 0), "disk head zeroed");
  assert.ok(plan.zero.some((z) => z.offset + z.length === 64 * MiB), "disk tail zeroed");
});

Deno.test("wipe keeps boot partitions: the ESP survives, foreign partitions go", () => {
  const boot = esp();
  const others = [
    { ...part(2, GPT_TYPE.LINUX_FILESYSTEM, "root", 9, 20), fs: ext4 },
    { ...part(3, GPT_TYPE.LINUX_SWAP, "swap", 29, 4) },
  ];
  assert.equal(decide(diskFacts({ gpt: [boot, ...others] })).action, "refuse");
  const plan = asPlan(decide(diskFacts({ gpt: [boot, ...others] }), wipe), "wipe");
  assertBootKept(plan, [boot]);
  assert.deepEqual(plan.kept.map((p) => p.name), ["EFI"]);
  assert.deepEqual(plan.removed.map((p) => p.name), ["root", "swap"]);
  assert.match(plan.reason, /keeping boot partitions 1 \(EFI\)/);
  assert.ok(plan.zero.length > 0 && plan.zero.every((z) => z.offset >= 9 * MiB));
});

Deno.test("a boot partition is kept by type even when it sits between foreign ones", () => {
  const boot = { ...part(2, T.EFI_SYSTEM, "ESP", 20, 8) };
  const gpt = [
    { ...part(1, GPT_TYPE.LINUX_FILESYSTEM, "a", 1, 19), fs: ext4 },
    boot,
    { ...part(3, GPT_TYPE.LINUX_FILESYSTEM, "b", 28, 30), fs: ext4 },
  ];
  const plan = asPlan(decide(diskFacts({ gpt }), wipe), "wipe");
  assertBootKept(plan, [boot]);
  assert.ok(plan.created.state.firstLba >= 28 * 2048, "placed in the larger free extent");
});

Deno.test("foreign filesystem without partitions: refuse unless wipe", () => {
  const f = diskFacts({ blank: false, wholeDiskFs: ext4 });
  const r = decide(f);
  assert.equal(r.action === "refuse" && r.code, "foreign-data");
  assert.match(r.reason, /a whole-disk ext4 filesystem/);
  const plan = asPlan(decide(f, wipe), "wipe");
  assert.deepEqual(plan.zero.slice(2), [
    { offset: 0, length: TEST_LAYOUT.zeroBytes },
    { offset: 64 * MiB - TEST_LAYOUT.zeroBytes, length: TEST_LAYOUT.zeroBytes },
  ]);
});

Deno.test("an MBR, or unknown non-zero data, is data: refuse unless wipe", () => {
  for (const f of [diskFacts({ blank: false, mbrPartitions: true }), diskFacts({ blank: false })]) {
    assert.equal(decide(f).action, "refuse");
    asPlan(decide(f, wipe), "wipe");
  }
});

Deno.test("partial layout (only STATE): refuse unless wipe", () => {
  const r = decide(diskFacts({ gpt: [esp(), ours()[0]] }));
  assert.equal(r.action === "refuse" && r.code, "partial-layout");
  asPlan(decide(diskFacts({ gpt: [esp(), ours()[0]] }), wipe), "wipe");
});

Deno.test("two STATE partitions: refuse as ambiguous", () => {
  const [s] = ours();
  const s2 = { ...part(4, T.STATE, N.STATE, 50, 4) };
  const r = decide(diskFacts({ gpt: [s, s2, ours()[1]] }), wipe);
  assert.equal(r.action === "refuse" && r.code, "ambiguous-layout");
});

Deno.test("in use: never wipe a mounted partition or a mounted whole disk", () => {
  const busy: PartitionFacts = { ...foreign(), mounted: true, blank: false, path: "/dev/vda1" };
  const r = decide(diskFacts({ gpt: [busy] }), wipe);
  assert.equal(r.action === "refuse" && r.code, "in-use");
  const whole = decide(diskFacts({ mounted: true, blank: false, wholeDiskFs: ext4 }), wipe);
  assert.equal(whole.action === "refuse" && whole.code, "in-use");
});

Deno.test("no room for STATE and EPHEMERAL: refuse", () => {
  const r = decide(diskFacts({ gpt: [part(1, T.EFI_SYSTEM, N.EFI, 1, 56)] }));
  assert.equal(r.action === "refuse" && r.code, "no-space");
});

Deno.test("4 KiB sectors: aligned to 1 MiB in 4096-byte LBAs", () => {
  const plan = asPlan(decide(diskFacts({ sectorSize: 4096, blank: true })), "create");
  assert.equal(plan.created.state.firstLba, 256);
  assert.equal((plan.created.state.lastLba + 1 - 256) * 4096, TEST_LAYOUT.stateSize);
  encodeGpt(plan.table, 64 * MiB, 4096);
});

Deno.test("classifyDisk names what a disk holds", () => {
  assert.equal(classifyDisk(undefined), "unknown");
  assert.equal(classifyDisk(diskFacts({ gpt: [esp(), ...ours()] })), "machined");
  assert.equal(classifyDisk(diskFacts({ gpt: [esp()] })), "image");
  assert.equal(classifyDisk(diskFacts({ blank: true })), "blank");
  assert.equal(classifyDisk(diskFacts({ gpt: [foreign()] })), "foreign");
  assert.equal(classifyDisk(diskFacts({ blank: false, wholeDiskFs: ext4 })), "foreign");
});

Deno.test("property: a wipe never drops, moves or zeroes a boot partition", () => {
  const types = [T.EFI_SYSTEM, T.BIOS_BOOT, T.BOOT_SLOT, GPT_TYPE.LINUX_FILESYSTEM, T.STATE];
  const layoutArb = fc.array(
    fc.record({ type: fc.constantFrom(...types), size: fc.integer({ min: 1, max: 12 }) }),
    { maxLength: 6 },
  );
  fc.assert(
    fc.property(layoutArb, fc.boolean(), (specs, wipeFlag) => {
      let at = 1;
      const gpt = specs.map((s, i) => {
        const p = part(i + 1, s.type, s.type === T.STATE ? N.STATE : `p${i}`, at, s.size);
        at += s.size;
        return p;
      });
      const size = 128 * MiB;
      const d = decideProvisioning(
        diskFacts({ size, gpt }),
        TEST_LAYOUT,
        { disk: "/dev/vda", wipe: wipeFlag },
        { newGuid: sequentialGuids() },
      );
      if (d.action === "refuse" || d.action === "leave") return;
      assertBootKept(d, gpt.filter(isBootPartition), size);
      if (!wipeFlag) assert.deepEqual(d.removed, []);
    }),
    { numRuns: 300 },
  );
});

Deno.test("ext4Head is what probe reports", async () => {
  const { probeSuperblock } = await import("../../platform/block/mod.ts");
  const uuid = "0a0b0c0d-0e0f-4011-8213-141516171819";
  assert.deepEqual(probeSuperblock(ext4Head("STATE", uuid)), {
    type: "ext4",
    label: "STATE",
    uuid,
  });
});

Deno.test("install.system: no ESP yet → wait for the installer, whatever the disk holds; then complete", () => {
  const system = { disk: "/dev/vdb", wipe: true, system: true };
  for (const f of [diskFacts(), diskFacts({ gpt: [] }), diskFacts({ gpt: [foreign()] })]) {
    const d = decideProvisioning(f, TEST_LAYOUT, system, { newGuid: sequentialGuids() });
    assert.equal(d.action === "refuse" && d.code, "awaiting-install", JSON.stringify(d, bigints));
  }
  // What install wrote (an ESP only): STATE and EPHEMERAL are appended.
  const boot = esp();
  const d = decideProvisioning(diskFacts({ gpt: [boot] }), TEST_LAYOUT, system, {
    newGuid: sequentialGuids(),
  });
  assertBootKept(asPlan(d, "complete"), [boot]);
  // Installed and provisioned: leave.
  const after = decideProvisioning(diskFacts({ gpt: [esp(), ...ours()] }), TEST_LAYOUT, system);
  assert.equal(after.action, "leave");
});
