/**
 * The upgrade service on a Raspberry Pi 3 (board `rpi3`), through the same
 * NodeUpgrade as the ESP path, on a fake boot FAT with the firmware's slot
 * choice and machined-init's consumption of the try (testing.ts bootPiFake):
 * install, bless, a failed trial, rollback and its refusals, UpgradeStatus,
 * and a power cut at every operation of an install.
 */
import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { Store } from "../runtime/mod.ts";
import { type ResourceSpecs, UPGRADE_STATUS } from "../resources/mod.ts";
import { PowerCut } from "../platform/esp/mod.ts";
import { piTrialTxt } from "../layout/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { type Compatible, RPI3_BOARD, UEFI_BOARD } from "../bundle/mod.ts";
import { piSlotEntries, readPiListing } from "./pi_slot_writer.ts";
import { bootPiFake, chunked, imagedPiFat, testBundle, testKeys } from "./testing.ts";

const PI: Compatible = { arch: Deno.build.arch, board: RPI3_BOARD };
const admin = { name: "admin", role: "os:admin" };
const settle = () => new Promise((r) => setTimeout(r, 150));

async function piNode(keys?: Awaited<ReturnType<typeof testKeys>>) {
  const k = keys ?? await testKeys();
  const esp = imagedPiFat();
  const store = new Store<ResourceSpecs>();
  let slot = "A";
  const reboots: string[] = [];
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: (by, mode) => reboots.push(`${by.name}${mode ? ` ${mode}` : ""}`),
    machine: () => Promise.resolve(PI),
    store,
    // The release record of the booted slot's image.
    imageVersion: () => Promise.resolve(slot === "A" ? "1.0.0" : "2.0.0"),
  });
  /** A reboot: the firmware's choice, machined-init's try; the slot booted. */
  const boot = () => {
    const b = bootPiFake(esp)!;
    assert.ok(b.rootOk, `slot ${b.slot}'s root verifies against its cmdline.txt`);
    slot = b.slot;
    return b.slot;
  };
  const states = async () => {
    await upgrade.refreshStatus();
    const spec = store.find(UPGRADE_STATUS, "runtime", "upgrade")?.spec ??
      store.list(UPGRADE_STATUS)[0].spec;
    return spec.slots.map((s) => `${s.slot}:${s.state}${s.booted ? "*" : ""}`).join(" ");
  };
  return { k, esp, upgrade, reboots, boot, states };
}

Deno.test("Pi 3: an upgrade writes slot B and arms trial.txt; the healthy trial is blessed into slot.txt", async () => {
  const n = await piNode();
  const before = n.esp.text("/A/root.img");
  assert.equal(await n.states(), "A:blessed* B:blessed", "as imaged: B is A's fallback");
  const b = await testBundle({ key: n.k.signing, compatible: PI });
  const a = await n.upgrade.upgrade(chunked(b.bytes), { stage: false }, admin);
  assert.deepEqual([a.slot, a.entry, a.version, a.rebooting], ["B", "trial.txt", "2.0.0", true]);
  await settle();
  assert.deepEqual(n.reboots, ["admin powercycle"], "cold: the firmware must read config.txt");
  assert.equal(n.esp.text("/trial.txt"), "os_prefix=B/\n");
  assert.equal(n.esp.text("/slot.txt"), "os_prefix=A/\n", "A stays blessed; B is no fallback now");
  assert.equal(n.esp.text("/A/root.img"), before, "the booted slot is untouched");
  assert.deepEqual(n.esp.files.get("/B/root.img"), b.files[2]);
  assert.match(
    n.esp.text("/B/cmdline.txt")!,
    /machined\.slot=B machined\.root\.sha256=[0-9a-f]{64}/,
  );
  assert.ok(n.esp.files.has("/B/bcm2837-rpi-3-b.dtb"), "the slot's device tree stays");
  assert.equal(await n.states(), "A:blessed* B:trial");

  assert.equal(n.boot(), "B");
  assert.equal(n.esp.text("/trial.txt"), "# tried B\n", "machined-init consumed the try");
  assert.equal(await n.states(), "A:blessed B:trial*");
  assert.equal(await n.upgrade.bless(), true);
  assert.equal(n.esp.text("/slot.txt"), "os_prefix=B/\n# fallback A\n");
  assert.equal(n.esp.text("/trial.txt"), piTrialTxt());
  assert.equal(await n.states(), "A:blessed B:blessed*");
  assert.equal(await n.upgrade.bless(), false, "blessing twice is a no-op");
  assert.equal(n.boot(), "B", "the blessed B keeps booting");
  assert.equal(n.upgrade.book.floor, "2.0.0", "blessing raises the floor");
});

Deno.test("Pi 3: a trial never ready is given up with no write and A boots; rollback to it is refused", async () => {
  const n = await piNode();
  const b = await testBundle({ key: n.k.signing, compatible: PI });
  await n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin);
  assert.equal(n.boot(), "B");
  const fat = JSON.stringify([...n.esp.files.keys()].sort()) + n.esp.text("/trial.txt");
  assert.equal(await n.upgrade.failTrial("not ready in 1 min"), true);
  await settle();
  assert.deepEqual(n.reboots, ["machined"]);
  assert.equal(JSON.stringify([...n.esp.files.keys()].sort()) + n.esp.text("/trial.txt"), fat);
  assert.equal(n.boot(), "A", "the reboot reads slot.txt");
  assert.equal(await n.states(), "A:blessed* B:bad");
  assert.equal(n.upgrade.book.last?.outcome, "rolled-back");
  assert.equal(await n.upgrade.failTrial("again"), false, "the blessed slot is never given up");
  const err = await n.upgrade.rollback({ stage: true }, admin).catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "failed-precondition", String(err));
  assert.equal(n.boot(), "A");
});

Deno.test("Pi 3: rollback names the other complete slot in slot.txt", async () => {
  const n = await piNode();
  const b = await testBundle({ key: n.k.signing, compatible: PI });
  await n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin);
  n.boot();
  await n.upgrade.bless();
  const r = await n.upgrade.rollback({ stage: false }, admin);
  assert.deepEqual([r.slot, r.rebooting], ["A", true]);
  assert.equal(n.boot(), "A");
  assert.equal(n.esp.text("/slot.txt"), "os_prefix=A/\n# fallback B\n");
  assert.equal(await n.states(), "A:blessed* B:blessed");
});

Deno.test("Pi 3: a UEFI bundle is refused by compatible, and a Pi bundle by a UEFI node; nothing written", async () => {
  const n = await piNode();
  const uefi = await testBundle({
    key: n.k.signing,
    compatible: { arch: Deno.build.arch, board: UEFI_BOARD },
  });
  const before = new Map(n.esp.files);
  const err = await n.upgrade.upgrade(chunked(uefi.bytes), { stage: true }, admin)
    .catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "failed-precondition", String(err));
  assert.match(err.message, /uefi-pc.*rpi3/);
  assert.deepEqual(n.esp.files, before);

  const { imagedEsp } = await import("./testing.ts");
  const esp = imagedEsp();
  const pc = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve("machined.slot=A"),
    trustedKeys: () => [n.k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
  });
  const pi = await testBundle({ key: n.k.signing, compatible: PI });
  const refused = await pc.upgrade(chunked(pi.bytes), { stage: true }, admin).catch((e) => e);
  assert.ok(refused instanceof UpgradeRefusedError, String(refused));
  assert.match(refused.message, /rpi3/);
});

Deno.test("Pi 3: a power cut at any operation of an install boots A or the whole B, never the booted slot changed", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing, compatible: PI });
  let total = 0;
  for (let cut = 0;; cut++) {
    const n = await piNode(k);
    n.esp.cutAt(cut);
    const done = await n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin)
      .then(() => true, (e) => {
        assert.ok(e instanceof PowerCut || e.cause instanceof PowerCut || /power cut/.test(e), e);
        return false;
      });
    if (done) {
      total = cut;
      break;
    }
    n.esp.powerOn();
    const a = n.esp.text("/A/root.img");
    const slot = n.boot();
    assert.equal(n.esp.text("/A/root.img"), a);
    if (slot === "B") {
      assert.deepEqual(n.esp.files.get("/B/root.img"), b.files[2], `cut at ${cut}`);
    }
    assert.ok(cut < 200, "the install ends");
  }
  assert.ok(total > 10, `an install is more than ten operations (${total})`);
});

Deno.test("piSlotEntries: states from slot.txt and trial.txt", () => {
  const files = ["vmlinuz", "initramfs.img", "root.img", "cmdline.txt"];
  const at = (slotTxt: string, trialTxt: string, booted: "A" | "B", b = files) =>
    piSlotEntries({ slotTxt, trialTxt, slotFiles: { A: files, B: b } }, booted)
      .map((e) => `${e.name.slot}:${e.file}:${e.state ?? e.name.left ?? "-"}`).join(" ");
  assert.equal(at("os_prefix=A/\n", "# no trial\n", "A"), "A:slot.txt:-");
  assert.equal(at("os_prefix=A/\n", "os_prefix=B/\n", "A"), "A:slot.txt:- B:trial.txt:1");
  assert.equal(at("os_prefix=A/\n", "# tried B\n", "B"), "A:slot.txt:- B:trial.txt:trial");
  assert.equal(at("os_prefix=A/\n", "# tried B\n", "A"), "A:slot.txt:- B:trial.txt:0");
  assert.equal(at("os_prefix=A/\n", "os_prefix=B/\n", "A", ["vmlinuz"]), "A:slot.txt:-");
});

Deno.test("readPiListing: a FAT without trial.txt reads as no trial", async () => {
  const esp = imagedPiFat();
  esp.files.delete("/trial.txt");
  const l = await esp.read(readPiListing);
  assert.equal(l.trialTxt, "");
  assert.ok(l.slotFiles.A.includes("cmdline.txt"));
});
