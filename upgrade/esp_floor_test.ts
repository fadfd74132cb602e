import assert from "node:assert/strict";
import { SlotError } from "../bundle/mod.ts";
import { hostCompatible } from "../bundle/mod.ts";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { EventBus } from "../events/mod.ts";
import { ESP_FLOOR_FILE, nextEspFloor, parseEspFloor, raiseEspFloor } from "./esp_floor.ts";
import { installBundle } from "./slot_writer.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { memoryRecordStore } from "./upgrade_record.ts";
import { bootFake, chunked, imagedEsp, imagedPiFat, testBundle, testKeys } from "./testing.ts";

const admin = { name: "admin", role: "os:admin" };

Deno.test("the ESP floor only rises: nextEspFloor decides, a junk file counts as none", () => {
  assert.equal(nextEspFloor(undefined, ["2.0.0"]), "2.0.0");
  assert.equal(nextEspFloor("2.0.0", ["1.5.0"]), undefined, "a forced downgrade never lowers it");
  assert.equal(nextEspFloor("2.0.0", ["2.0.0"]), undefined);
  assert.equal(nextEspFloor("2.0.0", ["2.0.1", "3.0.0"]), "3.0.0", "STATE's higher floor is kept");
  assert.equal(nextEspFloor("2.0.0", ["deadbeef", undefined]), undefined);
  assert.equal(parseEspFloor("2.0.0\n"), "2.0.0");
  assert.equal(parseEspFloor("junk\n"), undefined);
});

Deno.test("raiseEspFloor writes only upward, in a write session, on the ESP and the Pi's FAT", async () => {
  for (const esp of [imagedEsp("1.0.0"), imagedPiFat("1.0.0")]) {
    assert.equal(await raiseEspFloor(esp, ["2.0.0"]), "2.0.0");
    assert.equal(esp.text(ESP_FLOOR_FILE), "2.0.0\n");
    const sessions = esp.writeSessions;
    assert.equal(await raiseEspFloor(esp, ["1.0.0"]), undefined);
    assert.equal(esp.writeSessions, sessions, "no write session when nothing rises");
    assert.equal(esp.text(ESP_FLOOR_FILE), "2.0.0\n");
    assert.equal(esp.wroteWhileReadOnly, false);
  }
});

Deno.test("installBundle: each floor refusal (unordered, downgrade, replay) is typed and leaves the ESP unchanged", async () => {
  const k = await testKeys();
  const esp = imagedEsp("2.0.0");
  await raiseEspFloor(esp, ["2.0.0"]);
  const deps = { esp, booted: "A" as const, keys: [k.trusted], machine: hostCompatible() };
  const cases: [string, string][] = [
    ["deadbeef", "unordered"],
    ["2.0.0~old", "downgrade"],
    ["2.0.0", "replay"],
  ];
  for (const [version, reason] of cases) {
    const b = await testBundle({ key: k.signing, version });
    const before = new Map(esp.files);
    await assert.rejects(
      installBundle(chunked(b.bytes, 500), deps),
      (e) => e instanceof SlotError && e.reason === reason && /--force/.test(e.message),
    );
    assert.deepEqual(esp.files, before, `${version}: the ESP is unchanged`);
  }
});

Deno.test("NodeUpgrade: the floor on the ESP outlives a reset (STATE's record gone); unordered, replay and downgrade refused unless forced, and forcing never lowers it", async () => {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const logs: string[] = [];
  let slot = "A";
  const deps = {
    esp,
    events: new EventBus(),
    logger: { ...createLogger({ console: false }), warn: (_s: string, m: string) => logs.push(m) },
    cmdline: () => Promise.resolve(`machined.slot=${slot}`),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
  };
  const first = new NodeUpgrade({ ...deps, record: memoryRecordStore() });
  const v2 = await testBundle({ key: k.signing, version: "2.0.0" });
  await first.upgrade(chunked(v2.bytes), { stage: true }, admin);
  slot = bootFake(esp)!.slot;
  assert.equal(await first.bless(), true);
  assert.equal(esp.text(ESP_FLOOR_FILE), "2.0.0\n");
  await first.rollback({ stage: true }, admin);
  slot = bootFake(esp)!.slot;
  assert.equal(slot, "A");

  // A reset wipes STATE: the next machined finds an empty record store.
  const after = new NodeUpgrade({ ...deps, record: memoryRecordStore() });
  const refusals: [string, RegExp][] = [
    ["deadbeef", /no order/],
    ["1.5.0", /below/],
    ["2.0.0", /ranks as/],
  ];
  for (const [version, re] of refusals) {
    const b = await testBundle({ key: k.signing, version });
    const before = new Map(esp.files);
    const err = await after.upgrade(chunked(b.bytes), { stage: true }, admin).catch((e) => e);
    assert.ok(
      err instanceof UpgradeRefusedError && err.code === "failed-precondition",
      String(err),
    );
    assert.match(err.message, re);
    assert.match(err.message, /downgrade floor 2\.0\.0 \(recorded on the ESP.*--force/);
    assert.deepEqual(esp.files, before, `${version}: the ESP is unchanged`);
  }
  const hash = await testBundle({ key: k.signing, version: "deadbeef" });
  await after.upgrade(chunked(hash.bytes), { stage: true, force: true }, admin);
  assert.ok(
    logs.some((l) => /^downgrade forced by admin: .*deadbeef has no order/.test(l)),
    logs.join("\n"),
  );
  slot = bootFake(esp)!.slot;
  await after.bless();
  assert.equal(esp.text(ESP_FLOOR_FILE), "2.0.0\n", "a forced install never lowers the floor");
});
