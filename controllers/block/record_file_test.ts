import assert from "node:assert/strict";
import {
  mergeRecord,
  parseRecord,
  readRecordFile,
  type RecordContent,
  RecordFileError,
  writeRecordFile,
} from "./record_file.ts";

const G1 = "11111111-2222-4333-8444-555555555555";
const G2 = "99999999-2222-4333-8444-555555555555";
const p = (n: number, name = "STATE") => ({
  number: n,
  uuid: `00000000-0000-4000-9000-00000000000${n}`,
  type: "270cecda-5474-40f7-b05c-b041e9defe2a",
  name,
  firstLba: n * 2048,
  lastLba: n * 2048 + 2047,
});

Deno.test("merge: nothing created keeps the record; same disk unions; a new disk GUID replaces", () => {
  const existing: RecordContent = {
    version: 1,
    disk: "/dev/vda",
    diskGuid: G1,
    updatedAt: 1,
    partitions: [p(2)],
  };
  assert.equal(mergeRecord(existing, undefined, 5), existing);
  assert.equal(mergeRecord(undefined, undefined, 5), undefined);
  const same = { disk: "/dev/vda", diskGuid: G1, partitions: [p(2)] };
  assert.equal(mergeRecord(existing, same, 5), existing, "unchanged: same object back");
  const more = mergeRecord(existing, { ...same, partitions: [p(3, "EPHEMERAL")] }, 5)!;
  assert.deepEqual(more.partitions.map((x) => x.number), [2, 3]);
  assert.equal(more.updatedAt, 5);
  const replaced = mergeRecord(
    existing,
    { disk: "/dev/vdb", diskGuid: G2, partitions: [p(4)] },
    6,
  )!;
  assert.deepEqual(replaced, {
    version: 1,
    disk: "/dev/vdb",
    diskGuid: G2,
    updatedAt: 6,
    partitions: [p(4)],
  });
});

Deno.test("parse rejects what is not a record", () => {
  for (
    const bad of [
      "not json",
      "{}",
      JSON.stringify({ version: 1, disk: "/dev/vda", diskGuid: "x", updatedAt: 1, partitions: [] }),
      JSON.stringify({
        version: 1,
        disk: "/dev/vda",
        diskGuid: G1,
        updatedAt: 1,
        partitions: [{}],
      }),
    ]
  ) {
    assert.throws(() => parseRecord("/x", bad), RecordFileError);
  }
});

Deno.test("write then read round-trips atomically; a missing file reads as none", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/provisioned.json`;
    assert.equal(await readRecordFile(path), undefined);
    const r: RecordContent = {
      version: 1,
      disk: "/dev/vda",
      diskGuid: G1,
      updatedAt: 7,
      partitions: [p(2), p(3, "EPHEMERAL")],
    };
    await writeRecordFile(path, r);
    assert.deepEqual(await readRecordFile(path), r);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["provisioned.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
