/**
 * `machinectl get volumestatus` against the real apid and machined-side
 * server: an encrypted STATE's key slots (kind from the header's token,
 * proven this boot or not) and a rotation in progress come through the
 * proto mapping to the table and to -o yaml.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { VOLUME_STATUS, type VolumeStatusSpec } from "../resources/mod.ts";
import { clientConfig, runCli } from "./testing.ts";

const STATE: VolumeStatusSpec = {
  volume: "STATE",
  phase: "ready",
  disk: "/dev/vda",
  decision: "leave",
  message: "",
  partitionPath: "/dev/vda3",
  partitionUuid: "u3",
  filesystem: "ext4",
  filesystemUuid: "f3",
  created: null,
  diskGuid: "g",
  error: null,
  acted: null,
  encrypted: true,
  mappingPath: "/dev/mapper/STATE",
  unlockedBy: { slot: 0, kind: "nodeid" },
  locked: false,
  lockedReason: "",
  keySlots: [
    { slot: 0, kind: "nodeid", proven: true },
    { slot: 1, kind: "static", proven: false },
    { slot: 2, kind: "static", proven: true },
  ],
  rotation: { phase: "removing", message: "STATE: removing slots 1" },
  keyNotes: ["slot 3 (tpm) skipped: no TPM device (/dev/tpmrm0)"],
};

Deno.test("machinectl get volumestatus: key slots and the rotation's phase, table and yaml", async () => {
  const f = await startApiFixture();
  try {
    await f.store.modify(
      { type: VOLUME_STATUS, namespace: "block", id: "STATE" },
      "test",
      () => STATE,
    );
    const config = await clientConfig(f, "os:reader");
    const table = await runCli(config, "get", "volumestatus");
    assert.equal(table.code, 0, table.err);
    const [head, row] = table.out.trim().split("\n");
    assert.match(head, /CRYPT\s+KEYS\s+ROTATION/);
    assert.match(row, /nodeid:0\s+0:nodeid\+,1:static,2:static\+\s+removing/);
    const y = await runCli(config, "get", "vs", "STATE", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.deepEqual(spec.keySlots, STATE.keySlots);
    assert.deepEqual(spec.rotation, STATE.rotation);
    assert.deepEqual(spec.keyNotes, STATE.keyNotes);
  } finally {
    await f.close();
  }
});
