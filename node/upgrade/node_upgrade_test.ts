import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../../api/server/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { type Compatible, UEFI_BOARD } from "./manifest.ts";
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
