import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { Store } from "../runtime/mod.ts";
import type { ResourceSpecs } from "../resources/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { memoryRecordStore } from "./upgrade_record.ts";
import { type Compatible, UEFI_BOARD } from "../bundle/mod.ts";
import { bootFake, chunked, imagedEsp, testBundle, testKeys } from "./testing.ts";

async function node(machine?: Compatible) {
  const k = await testKeys();
  const esp = imagedEsp();
  const events = new EventBus();
  const seen: string[] = [];
  let slot = "A";
  const reboots: string[] = [];
  const upgrade = new NodeUpgrade({
    esp,
    events: {
      emit: (
        kind,
        subject,
        action,
        message,
        fields,
      ) => (seen.push(`${subject} ${action}`), events.emit(kind, subject, action, message, fields)),
    },
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: (by) => reboots.push(by.name),
    machine,
  });
  return { k, esp, upgrade, seen, reboots, boot: (s: string) => (slot = s) };
}

const admin = { name: "admin", role: "os:admin" };
const settle = () => new Promise((r) => setTimeout(r, 150));

Deno.test("NodeUpgrade: upgrade, then the healthy trial is blessed; a failed trial is marked bad and reboots", async () => {
  const n = await node();
  const b = await testBundle({ key: n.k.signing });
  const a = await n.upgrade.upgrade(chunked(b.bytes), { stage: false }, admin);
  assert.deepEqual([a.slot, a.entry, a.version, a.rebooting], [
    "B",
    "machined-b+3.conf",
    "2.0.0",
    true,
  ]);
  await settle();
  assert.deepEqual(n.reboots, ["admin"]);
  assert.deepEqual(n.seen.filter((s, i) => s !== n.seen[i - 1]), [
    "bundle verified",
    "bundle received",
    "bundle written",
    "bundle armed",
  ]);
  n.boot(bootFake(n.esp)!.slot);
  assert.equal(await n.upgrade.bless(), true);
  assert.ok(n.seen.includes("slot B blessed"));
  assert.equal(await n.upgrade.failTrial("late"), false, "a blessed slot is not failed");

  const m = await node();
  // m trusts another key: refused as permission-denied, an event says so.
  const err = await m.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin).catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "permission-denied", String(err));
  assert.ok(m.seen.includes("upgrade refused"));

  const t = await node();
  const tb = await testBundle({ key: t.k.signing });
  await t.upgrade.upgrade(chunked(tb.bytes), { stage: true }, admin);
  t.boot(bootFake(t.esp)!.slot);
  assert.equal(await t.upgrade.failTrial("not ready in 15 min"), true);
  await settle();
  assert.deepEqual(t.reboots, ["machined"]);
  assert.equal(bootFake(t.esp)!.slot, "A");
  assert.ok(t.seen.includes("slot B rolled-back"));
});

Deno.test("NodeUpgrade: blessing raises the floor on STATE; after a rollback a bundle below it is refused (failed-precondition, nothing written) unless forced, logged", async () => {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const store = new Store<ResourceSpecs>();
  const record = memoryRecordStore();
  const logs: string[] = [];
  let slot = "A";
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: {
      log: (level, _s, message) => logs.push(`${level} ${message}`),
      info: (_s, message) => logs.push(`info ${message}`),
      warn: (_s, message) => logs.push(`warn ${message}`),
      error: (_s, message) => logs.push(`error ${message}`),
    },
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
    record,
    store,
  });
  const status = () => store.get("UpgradeStatus", "runtime", "upgrade").spec;

  await upgrade.upgrade(
    chunked((await testBundle({ key: k.signing })).bytes),
    { stage: true },
    admin,
  );
  assert.deepEqual([status().last.outcome, status().last.version, status().slots[1].state], [
    "armed",
    "2.0.0",
    "trial",
  ]);
  slot = bootFake(esp)!.slot; // the trial boot of B
  assert.deepEqual([status().floor, record.record?.floor], ["1.0.0", "1.0.0"], "A ran blessed");
  await upgrade.refreshStatus();
  assert.equal(status().slots[1].triesLeft, 2, "the loader took one try");
  assert.equal(await upgrade.bless(), true);
  assert.equal(record.record?.floor, "2.0.0", "the floor rose when B was blessed");
  assert.equal(esp.text("/machined-floor.txt"), "2.0.0\n", "on the ESP too");
  assert.deepEqual([status().last.outcome, status().floor, status().floorSource], [
    "upgraded",
    "2.0.0",
    "esp",
  ]);

  await upgrade.rollback({ stage: true }, admin);
  slot = bootFake(esp)!.slot;
  assert.equal(slot, "A");
  await upgrade.refreshStatus();
  assert.deepEqual([status().booted, status().last.outcome, status().last.reason], [
    "A",
    "rolled-back",
    "rollback by admin",
  ]);
  assert.deepEqual(
    [status().floor, status().floorSource],
    ["2.0.0", "esp"],
    "a rollback keeps the floor",
  );

  // 1.5.0 is above the running 1.0.0 but below the floor: refused, nothing written.
  const older = await testBundle({ key: k.signing, version: "1.5.0" });
  const before = new Map(esp.files);
  const err = await upgrade.upgrade(chunked(older.bytes), { stage: true }, admin).catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "failed-precondition", String(err));
  assert.match(
    err.message,
    /1\.5\.0 is below the downgrade floor 2\.0\.0 \(recorded on the ESP.*--force/,
  );
  assert.deepEqual(esp.files, before, "the ESP is unchanged");
  assert.deepEqual([status().last.outcome, status().last.version], ["refused", "1.5.0"]);
  assert.equal(record.record?.last?.outcome, "rolled-back", "a refusal is not written to STATE");

  const forced = await upgrade.upgrade(chunked(older.bytes), { stage: true, force: true }, admin);
  assert.equal(forced.version, "1.5.0");
  assert.ok(
    logs.some((l) =>
      /^warn downgrade forced by admin: .*1\.5\.0 is below the downgrade floor 2\.0\.0/.test(l)
    ),
    logs.join("\n"),
  );
  assert.equal(status().last.outcome, "armed");
  assert.match(status().last.reason, /forced/);
});

Deno.test("NodeUpgrade: a trial that fails its health check shows rolled back with the reason; one the loader gave up on too", async () => {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const store = new Store<ResourceSpecs>();
  let slot = "A";
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
    store,
  });
  const last = () => store.get("UpgradeStatus", "runtime", "upgrade").spec.last;
  const bundle = await testBundle({ key: k.signing });
  await upgrade.upgrade(chunked(bundle.bytes), { stage: true }, admin);
  slot = bootFake(esp)!.slot;
  assert.equal(await upgrade.failTrial("not ready in 15 min"), true);
  await settle();
  assert.deepEqual([last().outcome, last().slot, last().version], ["rolled-back", "B", "2.0.0"]);
  assert.match(last().reason, /slot B marked bad: not ready in 15 min/);

  // Armed again; B panics on each of its three tries, then the loader boots A.
  slot = bootFake(esp)!.slot;
  await upgrade.upgrade(chunked(bundle.bytes), { stage: true }, admin);
  for (let i = 0; i < 3; i++) assert.equal(bootFake(esp)!.slot, "B");
  slot = bootFake(esp)!.slot;
  assert.equal(slot, "A");
  await upgrade.refreshStatus();
  assert.equal(last().outcome, "rolled-back");
  assert.match(last().reason, /slot B used its boot tries without becoming healthy/);
});

Deno.test("NodeUpgrade: on the imager's entries (no version in the title) the running version comes from the release record: the floor, and the slot versions UpgradeStatus shows", async () => {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0", false);
  const store = new Store<ResourceSpecs>();
  const record = memoryRecordStore();
  let slot = "A";
  let release = "1.0.0";
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
    record,
    store,
    imageVersion: () => Promise.resolve(release),
  });
  const status = () => store.get("UpgradeStatus", "runtime", "upgrade").spec;
  await upgrade.refreshStatus();
  assert.deepEqual(
    status().slots.map((s) => [s.slot, s.state, s.version]),
    [["A", "blessed", "1.0.0"], ["B", "blessed", ""]],
    "the other imaged slot names no version",
  );
  assert.deepEqual([status().floor, record.record?.floor], ["1.0.0", "1.0.0"]);
  const old = await testBundle({ key: k.signing, version: "0.9.0" });
  const err = await upgrade.upgrade(chunked(old.bytes), { stage: true }, admin).catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "failed-precondition", String(err));

  await upgrade.upgrade(
    chunked((await testBundle({ key: k.signing })).bytes),
    { stage: true },
    admin,
  );
  slot = bootFake(esp)!.slot;
  release = "2.0.0";
  assert.equal(await upgrade.bless(), true);
  assert.deepEqual(
    status().slots.map((s) => [s.slot, s.state, s.version]),
    [["A", "blessed", "1.0.0"], ["B", "blessed", "2.0.0"]],
    "A's version is the one machined ran from it",
  );
  assert.deepEqual(record.record?.ran, { A: "1.0.0", B: "2.0.0" });
  assert.equal(status().floor, "2.0.0");
});

Deno.test("NodeUpgrade on an aarch64 node: an aarch64 bundle installs and boots; an x86_64 one is refused failed-precondition before any write", async () => {
  const arm64 = { arch: "aarch64", board: UEFI_BOARD };
  const n = await node(arm64);
  const cmdline = "console=ttyAMA0,115200 panic=10 rdinit=/sbin/machined-init";
  const ok = await testBundle({ key: n.k.signing, compatible: arm64, cmdline });
  const a = await n.upgrade.upgrade(chunked(ok.bytes), { stage: true }, admin);
  assert.deepEqual([a.slot, a.entry], ["B", "machined-b+3.conf"]);
  const booted = bootFake(n.esp)!;
  assert.deepEqual([booted.slot, booted.rootOk], ["B", true]);
  assert.match(n.esp.text(`/loader/entries/${booted.entry}`) ?? "", /console=ttyAMA0,115200/);

  n.boot("B");
  const before = new Map([...n.esp.files].map(([p, b]) => [p, b.slice()]));
  const writes = n.esp.log.length;
  const x86 = await testBundle({
    key: n.k.signing,
    version: "3.0.0",
    compatible: { arch: "x86_64", board: UEFI_BOARD },
  });
  const err = await n.upgrade.upgrade(chunked(x86.bytes), { stage: true }, admin).catch((e) => e);
  assert.ok(err instanceof UpgradeRefusedError && err.code === "failed-precondition", String(err));
  assert.match(err.message, /built for x86_64\/uefi-pc, this machine is aarch64\/uefi-pc/);
  assert.equal(n.esp.log.length, writes, "nothing was written");
  assert.deepEqual(n.esp.files, before);
  assert.equal(n.seen.filter((s) => s === "bundle verified").length, 1, "only the aarch64 one");
  assert.equal(n.seen.at(-1), "upgrade refused");
});
