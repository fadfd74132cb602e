import assert from "node:assert/strict";
import { join } from "node:path";
import {
  dirRecordStore,
  memoryRecordStore,
  parseRecord,
  UPGRADE_RECORD_FILE,
  UpgradeBook,
} from "./upgrade_record.ts";

Deno.test("upgrade.json: a malformed record is an error naming the file and the field", () => {
  assert.throws(() => parseRecord("{", "/s/upgrade.json"), /\/s\/upgrade\.json: not JSON/);
  assert.throws(() => parseRecord('{"version":2}', "f"), /f: expected an object with version 1/);
  assert.throws(() => parseRecord('{"version":1,"floor":3}', "f"), /floor must be a string/);
  assert.throws(
    () => parseRecord('{"version":1,"last":{"outcome":"exploded"}}', "f"),
    /last must be an outcome/,
  );
  assert.deepEqual(parseRecord('{"version":1,"floor":"2.0.0"}', "f"), {
    version: 1,
    floor: "2.0.0",
  });
});

Deno.test("the record on a STATE directory round-trips, and is absent until written", async () => {
  const dir = await Deno.makeTempDir();
  const state: { mounted?: string } = {};
  const store = dirRecordStore(() => state.mounted);
  assert.equal(store.available(), false, "not while STATE is not mounted");
  state.mounted = dir;
  assert.equal(await store.load(), undefined);
  const book = new UpgradeBook(store);
  await book.raise("2.0.0");
  await book.note({ outcome: "upgraded", version: "2.0.0", slot: "B", reason: "" });
  const onDisk = JSON.parse(await Deno.readTextFile(join(dir, UPGRADE_RECORD_FILE)));
  assert.equal(onDisk.floor, "2.0.0");
  assert.equal(onDisk.last.outcome, "upgraded");
  // The next boot reads it back.
  const next = new UpgradeBook(store);
  await next.sync();
  assert.deepEqual([next.floor, next.last?.outcome, next.loaded], ["2.0.0", "upgraded", true]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("UpgradeBook: notes made before STATE is mounted merge with its record; the floor only rises", async () => {
  const store = memoryRecordStore({
    version: 1,
    floor: "3.0.0",
    last: { outcome: "upgraded", version: "3.0.0", slot: "A", reason: "", at: "t0" },
  }, false);
  const book = new UpgradeBook(store);
  await book.raise("2.0.0"); // STATE not mounted: kept in memory
  await book.note({ outcome: "rolled-back", version: "2.0.0", slot: "B", reason: "late" });
  assert.equal(book.loaded, false);
  assert.equal(store.record?.floor, "3.0.0", "nothing written while STATE is away");
  store.setAvailable(true);
  await book.sync();
  assert.equal(book.floor, "3.0.0", "the higher floor (STATE's) wins");
  assert.equal(book.last?.outcome, "rolled-back", "this boot's outcome wins over the older one");
  assert.deepEqual([store.record?.floor, store.record?.last?.outcome], ["3.0.0", "rolled-back"]);
  await book.raise("2.5.0");
  assert.equal(store.record?.floor, "3.0.0", "never lowered");
});

Deno.test("UpgradeBook: a refusal is shown but never written; the next outcome replaces it", async () => {
  const store = memoryRecordStore();
  const book = new UpgradeBook(store);
  await book.note({ outcome: "armed", version: "2.0.0", slot: "B", reason: "" });
  book.refused("1.0.0", "upgrade refused: below the floor");
  assert.equal(book.last?.outcome, "refused");
  assert.equal(store.record?.last?.outcome, "armed");
  await book.note({ outcome: "upgraded", version: "2.0.0", slot: "B", reason: "" });
  assert.equal(book.last?.outcome, "upgraded");
});

Deno.test("UpgradeBook: an unreadable record is reported and rewritten, not fatal", async () => {
  const errors: string[] = [];
  const store = memoryRecordStore();
  store.load = () => Promise.reject(new Error("f: not JSON"));
  const book = new UpgradeBook(store, (what) => errors.push(what));
  await book.raise("1.0.0");
  assert.equal(errors.length, 1);
  assert.equal(store.record?.floor, "1.0.0");
});

Deno.test("UpgradeBook: the versions run from each slot are recorded and merged", async () => {
  const store = memoryRecordStore({ version: 1, ran: { A: "1.0.0", B: "0.5.0" } }, false);
  const book = new UpgradeBook(store);
  await book.noteRan("B", "2.0.0");
  store.setAvailable(true);
  await book.sync();
  assert.deepEqual(store.record?.ran, { A: "1.0.0", B: "2.0.0" });
  assert.throws(() => parseRecord('{"version":1,"ran":{"C":"1"}}', "f"), /ran must map slots/);
});
