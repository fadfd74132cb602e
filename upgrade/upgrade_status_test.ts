import assert from "node:assert/strict";
import { Store } from "../runtime/mod.ts";
import type { ResourceSpecs, UpgradeSlotStatus } from "../resources/mod.ts";
import { RESOURCE_DESCRIPTORS } from "../resources/mod.ts";
import { parseEntryName } from "./entries.ts";
import { imagedEsp } from "./testing.ts";
import { memoryRecordStore, UpgradeBook } from "./upgrade_record.ts";
import {
  currentOutcome,
  type SlotEntry,
  slotStatuses,
  upgradeStatus,
  UpgradeStatusPublisher,
} from "./upgrade_status.ts";

const entry = (file: string, generation: number, version?: string): SlotEntry => ({
  file,
  name: parseEntryName(file)!,
  generation,
  version,
});

Deno.test("slots: blessed, trial with tries left, bad and empty, from the entry names", () => {
  const s = slotStatuses([
    entry("machined-a.conf", 1, "1.0.0"),
    entry("machined-b+2-1.conf", 2, "2.0.0"),
  ], "B");
  assert.deepEqual(s, [
    {
      slot: "A",
      booted: false,
      state: "blessed",
      version: "1.0.0",
      generation: 1,
      triesLeft: 0,
      entry: "machined-a.conf",
    },
    {
      slot: "B",
      booted: true,
      state: "trial",
      version: "2.0.0",
      generation: 2,
      triesLeft: 2,
      entry: "machined-b+2-1.conf",
    },
  ]);
  const bad = slotStatuses([
    entry("machined-a.conf", 1, "1.0.0"),
    entry("machined-b+0-3.conf", 2, "3.0.0"),
  ], "A");
  assert.deepEqual([bad[1].state, bad[1].triesLeft], ["bad", 0]);
  const empty = slotStatuses([entry("machined-a.conf", 1, "1.0.0")], "A");
  assert.deepEqual(empty[1], {
    slot: "B",
    booted: false,
    state: "empty",
    version: "",
    generation: 0,
    triesLeft: 0,
    entry: "",
  });
  // A power cut mid-bless leaves both names: the counted one counts (the loader's pessimism).
  const twins = slotStatuses([
    entry("machined-b.conf", 2, "2.0.0"),
    entry("machined-b+1-2.conf", 2, "2.0.0"),
  ], "B");
  assert.equal(twins[1].state, "trial");
});

Deno.test("the last outcome: an armed slot the loader gave up on is a rollback; one found blessed an upgrade", () => {
  const armed = { outcome: "armed" as const, version: "3.0.0", slot: "B", reason: "", at: "t" };
  const slots = (b: Partial<UpgradeSlotStatus>, bootedB = false): UpgradeSlotStatus[] => [
    {
      slot: "A",
      booted: !bootedB,
      state: "blessed",
      version: "1.0.0",
      generation: 1,
      triesLeft: 0,
      entry: "machined-a.conf",
    },
    {
      slot: "B",
      booted: bootedB,
      state: "trial",
      version: "3.0.0",
      generation: 2,
      triesLeft: 3,
      entry: "machined-b+3.conf",
      ...b,
    },
  ];
  assert.equal(currentOutcome(undefined, slots({})).outcome, "none");
  assert.deepEqual(
    currentOutcome(undefined, slots({}), false),
    {
      outcome: "unknown",
      version: "",
      slot: "",
      reason: "STATE's upgrade record has not been read yet",
      at: "",
    },
  );
  assert.equal(currentOutcome(armed, slots({}), false), armed, "noted this boot: known");
  assert.equal(currentOutcome(armed, slots({})).outcome, "armed", "staged, not rebooted yet");
  const fell = currentOutcome(armed, slots({ state: "bad", triesLeft: 0 }));
  assert.equal(fell.outcome, "rolled-back");
  assert.match(fell.reason, /slot B used its boot tries .* fell back to slot A/);
  assert.equal(currentOutcome(armed, slots({ state: "blessed" }, true)).outcome, "upgraded");
  const manual = { ...armed, outcome: "rolled-back" as const, reason: "rollback by admin" };
  assert.deepEqual(currentOutcome(manual, slots({ state: "blessed" }, true)), manual);
});

Deno.test("upgradeStatus: the floor in force and where it comes from", () => {
  const entries = [entry("machined-a.conf", 3, "1.0.0"), entry("machined-b.conf", 2, "2.0.0")];
  const s = upgradeStatus({ booted: "A", entries, storedFloor: "2.0.0", last: undefined });
  assert.deepEqual([s.booted, s.floor, s.floorSource, s.storedFloor], [
    "A",
    "2.0.0",
    "state",
    "2.0.0",
  ]);
  const r = upgradeStatus({ booted: "B", entries, storedFloor: undefined, last: undefined });
  assert.deepEqual([r.floor, r.floorSource, r.storedFloor], ["2.0.0", "running", ""]);
  const none = upgradeStatus({
    booted: undefined,
    entries: [],
    storedFloor: undefined,
    last: undefined,
  });
  assert.deepEqual([none.booted, none.floor, none.floorSource, none.last.outcome], [
    "",
    "",
    "none",
    "none",
  ]);
  const cols = RESOURCE_DESCRIPTORS.UpgradeStatus.columns.map((c) => c.value(s));
  assert.deepEqual(cols, ["A", "blessed 1.0.0 g3 (booted)", "blessed 2.0.0 g2", "2.0.0", "none"]);
});

Deno.test("the publisher reads the fake ESP, raises the floor to the booted blessed slot, writes UpgradeStatus only", async () => {
  const esp = imagedEsp("1.0.0");
  const store = new Store<ResourceSpecs>();
  const record = memoryRecordStore();
  const book = new UpgradeBook(record);
  const p = new UpgradeStatusPublisher({
    store,
    esp,
    book,
    booted: () => Promise.resolve("A" as const),
  });
  const before = new Map(esp.files);
  const s = await p.refresh();
  assert.deepEqual(esp.files.size, before.size);
  assert.deepEqual([s.booted, s.slots[0].state, s.slots[0].version, s.floor, s.floorSource], [
    "A",
    "blessed",
    "1.0.0",
    "1.0.0",
    "state",
  ]);
  assert.equal(
    record.record?.floor,
    "1.0.0",
    "the blessed booted image's version is the floor on STATE",
  );
  const r = store.get("UpgradeStatus", "runtime", "upgrade");
  assert.equal(r.metadata.owner, "upgrade");
  assert.deepEqual(r.spec, s);
  await p.refresh();
  assert.equal(
    store.get("UpgradeStatus", "runtime", "upgrade").metadata.version,
    1,
    "no change, no new version",
  );
});

Deno.test("the publisher says `unknown` until STATE's record is read, then what it names", async () => {
  const rolledBack = {
    outcome: "rolled-back" as const,
    version: "2.0.0",
    slot: "B",
    reason: "slot B used its boot tries",
    at: "2026-12-07T10:00:00.000Z",
  };
  const record = memoryRecordStore({ version: 1, floor: "1.0.0", last: rolledBack }, false);
  const store = new Store<ResourceSpecs>();
  const p = new UpgradeStatusPublisher({
    store,
    esp: imagedEsp("1.0.0"),
    book: new UpgradeBook(record),
    booted: () => Promise.resolve("A" as const),
  });
  const early = await p.refresh();
  assert.equal(early.last.outcome, "unknown");
  assert.equal(
    RESOURCE_DESCRIPTORS.UpgradeStatus.columns.at(-1)!.value(early),
    "unknown",
  );
  record.setAvailable(true); // STATE mounted
  assert.deepEqual((await p.refresh()).last, rolledBack);
});
