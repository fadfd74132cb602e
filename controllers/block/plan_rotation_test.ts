import assert from "node:assert/strict";
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import {
  mayKill,
  missingTpmKeys,
  nothingPending,
  pendingChanges,
  planRotation,
} from "./plan_rotation.ts";
import { mergeKeyNotes } from "./encryption_step.ts";

const enc = (...keys: VolumeEncryptionConfig["keys"]): VolumeEncryptionConfig => ({
  keys,
  cipher: "aes-xts-plain64",
  sector_size: 4096,
  allow_discards: false,
});
const S0 = { slot: 0, kind: "static" as const, passphrase: "old-passphrase" };
const S2 = { slot: 2, kind: "static" as const, passphrase: "new-passphrase" };
const N1 = { slot: 1, kind: "nodeid" as const };
const T1 = { slot: 1, kind: "tpm" as const };
const T3 = { slot: 3, kind: "tpm" as const };
const NO_TPM = "no TPM device (/dev/tpmrm0)";

Deno.test("new static key in a free slot: add and prove it, then kill the old slot", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  const p = planRotation("STATE", slots, enc(N1, S2), 1, NO_TPM);
  assert.deepEqual(p, { action: "rotate", add: [S2], prove: [2], kill: [0], seal: [], notes: [] });
  assert.equal(mayKill(p, new Set()), false, "phase 2 waits for the proof");
  assert.equal(mayKill(p, new Set([2])), true);
});

Deno.test("header matches the config: nothing to do", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  assert.deepEqual(planRotation("STATE", slots, enc(S0, N1), 0, NO_TPM), {
    action: "rotate",
    add: [],
    prove: [],
    kill: [],
    seal: [],
    notes: [],
  });
});

Deno.test("a configured slot holding another kind is refused: rotate through a free slot", () => {
  const p = planRotation("STATE", [{ slot: 0, kind: "nodeid" }], enc({ ...S0 }), 0, NO_TPM);
  assert.equal(p.action, "refuse");
  assert.match(p.action === "refuse" ? p.reason : "", /slot 0 holds a nodeid key/);
  assert.ok(!JSON.stringify(p).includes("old-passphrase"));
});

Deno.test("the unlocking key must stay configured until another is proven", () => {
  const p = planRotation("STATE", [{ slot: 0, kind: "static" }], enc(S2), 0, NO_TPM);
  assert.equal(p.action, "refuse");
  assert.match(p.action === "refuse" ? p.reason : "", /slot 0\) is not in the config/);
});

Deno.test("configured tpm slots are never killed by a rotation", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 3, kind: "tpm" }];
  const p = planRotation("STATE", slots, enc(S0, { slot: 3, kind: "tpm" }), 0, NO_TPM);
  assert.deepEqual(p, { action: "rotate", add: [], prove: [], kill: [], seal: [], notes: [] });
});

Deno.test("a tpm slot skipped at format: sealed in phase 1 once the TPM can, never gating phase 2", () => {
  const slots = [{ slot: 0, kind: "static" }];
  const p = planRotation("STATE", slots, enc(S0, T1), 0, undefined);
  assert.deepEqual(p, { action: "rotate", add: [], prove: [], kill: [], seal: [T1], notes: [] });
  assert.equal(mayKill(p, new Set()), true, "a tpm slot is an extra: no proof of it gates a kill");
});

Deno.test("a tpm slot the TPM cannot take now: left out with the reason, nothing to write", () => {
  const slots = [{ slot: 0, kind: "static" }];
  const c = pendingChanges(slots, enc(S0, T1), NO_TPM);
  assert.deepEqual(c, { add: [], seal: [], kill: [], notes: [`slot 1 (tpm) skipped: ${NO_TPM}`] });
  assert.equal(
    nothingPending(c),
    true,
    "no key is tried (argon2id) for a slot that cannot be sealed",
  );
  assert.equal(nothingPending(pendingChanges(slots, enc(S0, T1), undefined)), false);
});

Deno.test("a tpm key whose slot holds another kind is never written over, only noted", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  const c = pendingChanges(slots, enc(S0, T1), undefined);
  assert.deepEqual(c.seal, []);
  assert.deepEqual(c.kill, []);
  assert.deepEqual(c.notes, ["slot 1 (tpm) not added: the header's slot 1 holds a nodeid key"]);
  assert.deepEqual(missingTpmKeys(slots, enc(S0, T1)), []);
});

Deno.test("a new static key and a missing tpm slot: one pass adds both, kills after the static proof", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  const p = planRotation("STATE", slots, enc(N1, S2, T3), 1, undefined);
  assert.deepEqual(p, {
    action: "rotate",
    add: [S2],
    prove: [2],
    kill: [0],
    seal: [T3],
    notes: [],
  });
});

Deno.test("key notes after a pass: the pass's word on a missing tpm slot replaces the format's", () => {
  const format = [`slot 1 (tpm) skipped: ${NO_TPM}`];
  assert.deepEqual(mergeKeyNotes(format, [1], []), [], "sealed now: the old skip goes");
  assert.deepEqual(mergeKeyNotes(format, [1], format), format, "still skipped: said once");
  const unlock = ["slot 3 (tpm): The TPM refused to unseal the key (load)"];
  assert.deepEqual(
    mergeKeyNotes(unlock, [1], [`slot 1 (tpm) skipped: refused`]),
    [...unlock, "slot 1 (tpm) skipped: refused"],
    "notes about other slots are kept",
  );
});
