/**
 * The Pi 3's A/B plans run on a model of the boot FAT (a map of paths to
 * text) with the firmware's choice (trial.txt's os_prefix over slot.txt's,
 * a prefix whose kernel or device tree is missing ignored) and
 * machined-init's consumption of the try. What the real firmware does with
 * these files is hardware-only (docs/decisions.md).
 */
import assert from "node:assert/strict";
import {
  assertPiSparesBooted,
  type PiBootListing,
  piBootOutcome,
  piBootState,
  piTriedTxt,
  planPiBless,
  planPiInstall,
  planPiRollback,
} from "./pi_slot_plan.ts";
import type { PlanStep } from "./slot_plan.ts";
import type { Manifest } from "../bundle/mod.ts";
import { SlotError } from "../bundle/mod.ts";
import type { Slot } from "./entries.ts";
import { piTrialTxt } from "../layout/mod.ts";

const DTB = "bcm2837-rpi-3-b.dtb";

/** A freshly imaged boot FAT: both slots complete, A blessed. */
function imaged(): Map<string, string> {
  const fat = new Map<string, string>([["/slot.txt", "os_prefix=A/\n# fallback B\n"], [
    "/trial.txt",
    piTrialTxt(),
  ]]);
  for (const s of ["A", "B"]) {
    for (const f of ["vmlinuz", "initramfs.img", "root.img", "cmdline.txt", DTB]) {
      fat.set(`/${s}/${f}`, `v1 ${f}`);
    }
  }
  return fat;
}

function listing(fat: Map<string, string>): PiBootListing {
  const files = (s: Slot) =>
    [...fat.keys()].filter((k) => k.startsWith(`/${s}/`)).map((k) => k.slice(3));
  return {
    slotTxt: fat.get("/slot.txt") ?? "",
    trialTxt: fat.get("/trial.txt") ?? "",
    slotFiles: { A: files("A"), B: files("B") },
  };
}

/** Apply one step; `receive` writes the new version's file, `verify` checks it is there. */
function apply(fat: Map<string, string>, s: PlanStep): void {
  switch (s.op) {
    case "remove":
      fat.delete(s.path);
      return;
    case "receive":
      fat.set(s.path, `v2 ${s.file}`);
      return;
    case "rename":
      fat.set(s.to, fat.get(s.from)!);
      fat.delete(s.from);
      return;
    case "writeEntry":
      fat.set(s.path, s.text);
      return;
    case "verify":
      assert.ok(fat.get(s.path)?.startsWith("v2 "), s.path);
      return;
    case "syncDir":
      return;
  }
}

/** The firmware: trial.txt's os_prefix wins over slot.txt's; a prefix without kernel and DTB is ignored. */
function firmwareBoots(fat: Map<string, string>): Slot | undefined {
  const prefix = (t = "") => /^os_prefix=([AB])\/$/m.exec(t)?.[1] as Slot | undefined;
  const slot = prefix(fat.get("/trial.txt")) ?? prefix(fat.get("/slot.txt"));
  if (!slot || !fat.has(`/${slot}/vmlinuz`) || !fat.has(`/${slot}/${DTB}`)) return undefined;
  return slot;
}

/** machined-init on the trial boot: the try is consumed before anything can fail. */
function consumeTry(fat: Map<string, string>, booted: Slot): void {
  if (piBootState(listing(fat)).armed === booted) fat.set("/trial.txt", piTriedTxt(booted));
}

const MANIFEST: Manifest = {
  format: 1,
  compatible: { arch: "aarch64", board: "rpi3" },
  version: "2.0.0",
  cmdline: "console=ttyS1,115200 rdinit=/sbin/machined-init -- /usr/bin/deno run main.js",
  files: [
    { name: "vmlinuz", size: 1, sha256: "a".repeat(64) },
    { name: "initramfs.img", size: 1, sha256: "b".repeat(64) },
    { name: "root.img", size: 1, sha256: "c".repeat(64) },
  ],
} as unknown as Manifest;

function install(fat: Map<string, string>, booted: Slot, upTo = Infinity): number {
  const p = planPiInstall(listing(fat), booted, MANIFEST);
  const steps = [...p.clean, ...p.receive, ...p.settle, ...p.verify, ...p.commit, ...p.arm];
  steps.slice(0, upTo).forEach((s) => apply(fat, s));
  return steps.length;
}

Deno.test("install arms one trial of B; a healthy B is blessed and keeps booting", () => {
  const fat = imaged();
  install(fat, "A");
  assert.match(fat.get("/B/cmdline.txt")!, /machined\.slot=B machined\.root\.sha256=c{64} -- /);
  assert.equal(fat.get("/A/vmlinuz"), "v1 vmlinuz", "the booted slot is untouched");
  assert.equal(firmwareBoots(fat), "B");
  consumeTry(fat, "B");
  assert.equal(piBootOutcome(piBootState(listing(fat)), "B"), "trial");
  planPiBless(listing(fat), "B").forEach((s) => apply(fat, s));
  assert.equal(fat.get("/slot.txt"), "os_prefix=B/\n# fallback A\n");
  assert.equal(firmwareBoots(fat), "B");
  assert.equal(piBootOutcome(piBootState(listing(fat)), "B"), "blessed");
  assert.deepEqual(planPiBless(listing(fat), "B"), []);
});

Deno.test("a trial that fails after its try boots the blessed slot and stays failed until reinstalled", () => {
  const fat = imaged();
  install(fat, "A");
  consumeTry(fat, "B");
  // B panics, hangs until the watchdog, or is never ready: any reboot now reads slot.txt.
  assert.equal(firmwareBoots(fat), "A");
  assert.equal(piBootOutcome(piBootState(listing(fat)), "A"), "rolled-back");
  assert.deepEqual(planPiBless(listing(fat), "A"), [], "nothing to bless on the blessed slot");
  assert.equal(firmwareBoots(fat), "A", "every later boot is A");
  assert.equal(piBootOutcome(piBootState(listing(fat)), "A"), "rolled-back");
  // Installing again clears the failed try first (in the commit, before the new arm).
  install(fat, "A");
  assert.equal(firmwareBoots(fat), "B");
  assert.equal(piBootState(listing(fat)).tried, undefined);
});

Deno.test("a power cut at any step of an install leaves a bootable FAT (A before the arm, B after)", () => {
  const total = install(imaged(), "A");
  for (let cut = 0; cut <= total; cut++) {
    const fat = imaged();
    install(fat, "A", cut);
    const boots = firmwareBoots(fat);
    // The arm's rename (the second-to-last step) is the commit point.
    assert.equal(boots, cut >= total - 1 ? "B" : "A", `cut at ${cut} of ${total}`);
    if (boots === "B") assert.equal(fat.get("/B/vmlinuz"), "v2 vmlinuz");
    assert.equal(fat.get("/A/vmlinuz"), "v1 vmlinuz");
    // Installing again after the cut completes.
    install(fat, "A");
    assert.equal(firmwareBoots(fat), "B");
  }
});

Deno.test("rollback names the other complete slot; an unfinished or failed one is refused", () => {
  const fat = imaged();
  install(fat, "A");
  consumeTry(fat, "B");
  planPiBless(listing(fat), "B").forEach((s) => apply(fat, s));
  const { target, steps } = planPiRollback(listing(fat), "B");
  assert.equal(target, "A");
  steps.forEach((s) => apply(fat, s));
  assert.equal(firmwareBoots(fat), "A");

  const failed = imaged();
  install(failed, "A");
  consumeTry(failed, "B");
  assert.throws(
    () => planPiRollback(listing(failed), "A"),
    (e) => e instanceof SlotError && e.reason === "slot-bad",
  );
  // Written but not armed (a power cut before the arm): no longer A's fallback.
  const unarmed = imaged();
  const total = install(imaged(), "A");
  install(unarmed, "A", total - 3);
  assert.equal(unarmed.get("/slot.txt"), "os_prefix=A/\n");
  assert.throws(
    () => planPiRollback(listing(unarmed), "A"),
    (e) => e instanceof SlotError && e.reason === "slot-bad",
  );
  const empty = imaged();
  empty.delete("/B/root.img");
  assert.throws(
    () => planPiRollback(listing(empty), "A"),
    (e) => e instanceof SlotError && e.reason === "nothing-to-roll-back",
  );
  assert.throws(() => planPiRollback(listing(empty), undefined), SlotError);
});

Deno.test("no plan step names the booted slot's directory", () => {
  const p = planPiInstall(listing(imaged()), "B", MANIFEST);
  for (const s of [...p.clean, ...p.receive, ...p.settle, ...p.commit, ...p.arm]) {
    const paths = s.op === "rename" ? [s.from, s.to] : s.op === "syncDir" ? [s.dir] : [s.path];
    assert.ok(paths.every((x) => !x.startsWith("/B")), JSON.stringify(s));
  }
  assert.throws(
    () => assertPiSparesBooted([{ op: "remove", path: "/A/root.img" }], "A"),
    (e) => e instanceof SlotError && e.reason === "booted-slot",
  );
  assert.throws(() => planPiInstall(listing(imaged()), undefined, MANIFEST), SlotError);
});
