import assert from "node:assert/strict";
import type { GptTable } from "../../platform/block/mod.ts";
import { GPT_TYPE } from "../../platform/block/mod.ts";
import { part } from "./fake_disks.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import { partitionsResetMayFormat, type RecordForReset } from "./reset_may_format.ts";

const DISK = "11111111-2222-4333-8444-555555555555";
const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 8);
const state = part(2, T.STATE, N.STATE, 9, 4);
const eph = part(3, T.EPHEMERAL, N.EPHEMERAL, 13, 40);
const table = (...partitions: GptTable["partitions"]): GptTable => ({ diskGuid: DISK, partitions });
const plain = ({ number, uuid, type, name, firstLba, lastLba }: typeof state) => ({
  number,
  uuid,
  type,
  name,
  firstLba,
  lastLba,
});
const record = (...ps: Array<typeof state>): RecordForReset => ({
  diskGuid: DISK,
  partitions: ps.map(plain),
});

Deno.test("recorded STATE and EPHEMERAL that still match may be formatted", () => {
  const got = partitionsResetMayFormat(record(state, eph), table(esp, state, eph));
  assert.deepEqual(got.map((p) => p.name), ["STATE", "EPHEMERAL"]);
});

Deno.test("no record, no table, or another disk GUID: nothing", () => {
  assert.deepEqual(partitionsResetMayFormat(undefined, table(esp, state, eph)), []);
  assert.deepEqual(partitionsResetMayFormat(record(state, eph), undefined), []);
  const other = { ...table(esp, state, eph), diskGuid: "99999999-2222-4333-8444-555555555555" };
  assert.deepEqual(partitionsResetMayFormat(record(state, eph), other), []);
});

Deno.test("a boot partition is never returned, even when recorded", () => {
  const forged = record(esp, state, {
    ...esp,
    number: 4,
    uuid: state.uuid.replace("9000", "9001"),
  });
  assert.deepEqual(partitionsResetMayFormat(forged, table(esp, state)).map((p) => p.name), [
    "STATE",
  ]);
  // A STATE-named partition whose type was changed to ESP since recording.
  const retyped = { ...state, type: T.EFI_SYSTEM };
  assert.deepEqual(partitionsResetMayFormat(record(state), table(esp, retyped)), []);
});

Deno.test("only what was recorded: unrecorded partitions of our types are left out", () => {
  assert.deepEqual(partitionsResetMayFormat(record(state), table(esp, state, eph)).length, 1);
});

Deno.test("re-created, moved, renamed, renumbered or retyped partitions are left out", () => {
  const changes = [
    { ...state, firstLba: state.firstLba + 2048 },
    { ...state, lastLba: state.lastLba + 1 },
    { ...state, name: "DATA" },
    { ...state, number: 7 },
    { ...state, type: GPT_TYPE.LINUX_FILESYSTEM },
  ];
  for (const changed of changes) {
    assert.deepEqual(
      partitionsResetMayFormat(record(state), table(esp, changed)),
      [],
      changed.name,
    );
  }
});

Deno.test("GUID comparison ignores case", () => {
  const r = record(state);
  const upper = {
    ...r,
    partitions: r.partitions.map((p) => ({ ...p, uuid: p.uuid.toUpperCase() })),
  };
  assert.equal(partitionsResetMayFormat(upper, table(state)).length, 1);
});
