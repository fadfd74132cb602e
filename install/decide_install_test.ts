import assert from "node:assert/strict";
import { diskFacts, part, sequentialGuids } from "../controllers/block/testing.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../layout/mod.ts";
import { GPT_TYPE, verifyGpt } from "../platform/block/mod.ts";
import { type BootMedium, decideInstall, type InstallInputs } from "./decide_install.ts";

const MiB = 1024 * 1024;
/** The generic image's boot disk: its ESP at 1 MiB, 16 MiB long. */
const boot: BootMedium = {
  disk: "/dev/vda",
  esp: { number: 1, firstLba: 2048, lastLba: 2048 + 16 * 2048 - 1 },
};
const install = { disk: "/dev/vdb", wipe: false, system: true };
const target = (o: Parameters<typeof diskFacts>[0] = {}) => diskFacts({ path: "/dev/vdb", ...o });
const ourEsp = () => ({
  ...part(1, T.EFI_SYSTEM, N.EFI, 1, 16),
  fs: { type: "vfat" as const, label: "EFI", uuid: "X" },
});
const foreign = () => ({
  ...part(1, GPT_TYPE.LINUX_FILESYSTEM, "data", 1, 30),
  fs: { type: "ext4" as const, label: "data", uuid: "u" },
});

function decide(o: Partial<InstallInputs>) {
  return decideInstall({
    install,
    target: target(),
    boot,
    minFree: 8 * MiB,
    newGuid: sequentialGuids(),
    ...o,
  });
}
const show = (x: unknown) => JSON.stringify(x, (_k, v) => typeof v === "bigint" ? String(v) : v);
const code = (d: ReturnType<typeof decideInstall>) => d.action === "refuse" ? d.code : d.action;

Deno.test("install decision: nothing without install.system, or when the disk is the boot medium", () => {
  assert.equal(decide({ install: undefined }).action, "none");
  assert.equal(decide({ install: { ...install, system: false } }).action, "none");
  assert.equal(decide({ target: target({ path: "/dev/vda" }) }).action, "none");
});

Deno.test("install decision: the boot medium is never a target; an unknown one writes nothing", () => {
  assert.equal(code(decide({ target: target({ path: "/dev/vda2" }) })), "boot-medium");
  assert.equal(code(decide({ boot: undefined })), "unknown-boot-medium");
  assert.equal(code(decide({ target: undefined })), "missing");
  assert.equal(code(decide({ target: target({ readOnly: true }) })), "read-only");
  assert.equal(code(decide({ target: target({ mounted: true }) })), "in-use");
  assert.equal(code(decide({ target: target({ sectorSize: 4096 }) })), "sector-size");
  assert.equal(code(decide({ target: target({ size: 20 * MiB }) })), "too-small");
});

Deno.test("install decision: a blank disk or an empty GPT gets the ESP, at 1 MiB, of the boot ESP's size", async () => {
  for (const t of [target(), target({ gpt: [] })]) {
    const d = decide({ target: t });
    assert.equal(d.action, "install", show(d));
    if (d.action !== "install") continue;
    assert.deepEqual(d.copy, { from: MiB, to: MiB, length: 16 * MiB });
    const [p] = d.plan.table.partitions;
    assert.deepEqual([p.type, p.name, p.firstLba, p.lastLba], [
      T.EFI_SYSTEM,
      N.EFI,
      2048,
      2048 + 16 * 2048 - 1,
    ]);
    assert.equal(d.plan.table.partitions.length, 1, "STATE and EPHEMERAL are the provisioner's");
    // The writes are a valid GPT for the target's size (imager/disk_image.ts's planDisk).
    const disk = new Uint8Array(64 * MiB);
    for (const w of d.plan.writes) disk.set(w.data, w.offset);
    const read = (off: number, len: number) => Promise.resolve(disk.slice(off, off + len));
    const v = await verifyGpt(read, disk.length, 512);
    assert.equal(v.table.partitions[0].uuid, p.uuid);
  }
});

Deno.test("install decision: data needs wipe; mounted partitions are never wiped", () => {
  const withData = [
    target({ gpt: [foreign()] }),
    target({ blank: false }),
    target({ mbrPartitions: true }),
    target({ wholeDiskFs: { type: "ext4", label: "x", uuid: "u" }, blank: false }),
    // STATE and EPHEMERAL but no ESP (a data disk from before): data too.
    target({ gpt: [part(1, T.STATE, N.STATE, 1, 4), part(2, T.EPHEMERAL, N.EPHEMERAL, 5, 40)] }),
  ];
  for (const t of withData) {
    const refused = decide({ target: t });
    assert.equal(code(refused), "foreign-data", show(refused));
    assert.match(refused.reason, /machine\.install\.wipe/);
    const wiped = decide({ target: t, install: { ...install, wipe: true } });
    assert.equal(wiped.action, "install", show(wiped));
    assert.match(wiped.reason, /^Wiping /);
  }
  const busy = target({ gpt: [{ ...foreign(), mounted: true }] });
  assert.equal(code(decide({ target: busy, install: { ...install, wipe: true } })), "in-use");
});

Deno.test("install decision: our ESP already there (after the install's reboot): installed, nothing written", () => {
  for (const wipe of [false, true]) {
    const t = target({ gpt: [ourEsp(), part(2, T.STATE, N.STATE, 17, 4)] });
    assert.equal(decide({ target: t, install: { ...install, wipe } }).action, "installed");
  }
  // An ESP of another size (someone else's) is data.
  const other = target({ gpt: [{ ...ourEsp(), lastLba: 2048 + 8 * 2048 - 1 }] });
  assert.equal(code(decide({ target: other })), "foreign-data");
});
