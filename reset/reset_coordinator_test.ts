import assert from "node:assert/strict";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import type { GptPartition } from "../platform/block/mod.ts";
import { FakeBootIdSource } from "../platform/identity/mod.ts";
import { Store } from "../runtime/mod.ts";
import type { ResourceSpecs } from "../resources/mod.ts";
import { ResetRefusedError } from "../api/server/mod.ts";
import { ResetChallenger } from "./challenge.ts";
import { ResetCoordinator, type ResetPlan } from "./reset_coordinator.ts";
import { DISK_GUID, eph, esp, installedDisk, recordInstall, state } from "./testing.ts";

const MiB = 1024 * 1024;
const by = { name: "admin", role: "os:admin" };

async function fixture(recorded: GptPartition[] | null = [state, eph]) {
  const block = await installedDisk();
  const store = new Store<ResourceSpecs>();
  if (recorded) recordInstall(store, recorded);
  const bootId = new FakeBootIdSource("boot-1");
  const events = new EventBus();
  const started: ResetPlan[] = [];
  let now = 0;
  const challenger = new ResetChallenger(60_000, () => now);
  const coordinator = new ResetCoordinator({
    store,
    block,
    bootId,
    node: () => "node-1",
    events,
    logger: createLogger({ console: false }),
    start: (p) => started.push(p),
    challenger,
  });
  const snapshot = () => block.bytes("/dev/vda").slice();
  return {
    block,
    store,
    bootId,
    events,
    started,
    coordinator,
    snapshot,
    tick: (ms: number) => (now += ms),
  };
}

const ask = { challenge: "", mode: "graceful" as const, powerOff: false };
const settle = () => new Promise((r) => setTimeout(r, 150));

function refused(code: string) {
  return (e: unknown) => e instanceof ResetRefusedError && e.code === code;
}

Deno.test("first call: what would be wiped and a challenge; nothing starts, nothing changes", async () => {
  const f = await fixture();
  const before = f.snapshot();
  const a = await f.coordinator.request(ask, by);
  assert.equal(a.accepted, false);
  assert.ok(a.challenge.startsWith("mdr1."));
  assert.equal(a.bootId, "boot-1");
  assert.deepEqual(a.partitions.map((p) => [p.label, p.disk, p.sizeBytes]).sort(), [
    ["EPHEMERAL", "/dev/vda", 8 * MiB],
    ["STATE", "/dev/vda", 4 * MiB],
  ]);
  assert.ok(!a.partitions.some((p) => p.guid === esp.uuid));
  await settle();
  assert.deepEqual(f.started, []);
  assert.deepEqual(f.snapshot(), before);
});

Deno.test("the echoed challenge starts the reset once; later calls get its progress", async () => {
  const f = await fixture();
  const { challenge } = await f.coordinator.request(ask, by);
  const ok = await f.coordinator.request({ challenge, mode: "forced", powerOff: true }, by);
  assert.equal(ok.accepted, true);
  assert.equal(ok.mode, "forced");
  await settle();
  assert.equal(f.started.length, 1);
  assert.equal(f.started[0].powerOff, true);
  assert.deepEqual(f.started[0].targets.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
  f.coordinator.step("unmount");
  const again = await f.coordinator.request(ask, by);
  assert.equal(again.accepted, true);
  assert.equal(again.progress, "unmount");
  const twice = await f.coordinator.request({ challenge, mode: "graceful", powerOff: false }, by);
  assert.equal(twice.progress, "unmount");
  await settle();
  assert.equal(f.started.length, 1, "a second request never starts another reset");
  assert.ok(f.events.history().some((e) => e.subject === "reset" && e.action === "accepted"));
});

Deno.test("a challenge from another boot, expired, or for another set is FailedPrecondition", async () => {
  const f = await fixture();
  const { challenge } = await f.coordinator.request(ask, by);
  f.bootId.reboot();
  await assert.rejects(
    f.coordinator.request({ ...ask, challenge }, by),
    refused("failed-precondition"),
  );

  const g = await fixture();
  const c2 = (await g.coordinator.request(ask, by)).challenge;
  g.tick(60_001);
  await assert.rejects(g.coordinator.request({ ...ask, challenge: c2 }, by), /expired/);

  const h = await fixture();
  const c3 = (await h.coordinator.request(ask, by)).challenge;
  // The table changed since: EPHEMERAL was re-created (a new GUID), so the set differs.
  await h.block.writeGpt("/dev/vda", {
    diskGuid: DISK_GUID,
    partitions: [esp, state, { ...eph, uuid: "00000000-0000-4000-9000-0000000000ff" }],
  });
  await assert.rejects(h.coordinator.request({ ...ask, challenge: c3 }, by), /covers partitions/);
  await assert.rejects(
    h.coordinator.request({ ...ask, challenge: "garbage" }, by),
    refused("failed-precondition"),
  );
  await settle();
  assert.deepEqual([...f.started, ...g.started, ...h.started], []);
});

Deno.test("no record loaded yet: Unavailable; a record matching nothing: refused", async () => {
  const f = await fixture(null);
  await assert.rejects(f.coordinator.request(ask, by), refused("unavailable"));
  const g = await fixture([esp]);
  await assert.rejects(g.coordinator.request(ask, by), refused("failed-precondition"));
});
