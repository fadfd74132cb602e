import assert from "node:assert/strict";
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import { concludeUnlock, decideEncryption } from "./decide_encryption.ts";

const enc = (...keys: VolumeEncryptionConfig["keys"]): VolumeEncryptionConfig => ({
  keys,
  cipher: "aes-xts-plain64",
  sector_size: 4096,
  allow_discards: false,
});
const STATIC = { slot: 0, kind: "static" as const, passphrase: "correct-horse" };
const NODEID = { slot: 1, kind: "nodeid" as const };
const TPM = { slot: 2, kind: "tpm" as const };

Deno.test("blank + encryption + consent: format with the derived keys, tpm sealed after", () => {
  const d = decideEncryption("STATE", { kind: "blank" }, enc(TPM, STATIC, NODEID), true);
  assert.equal(d.action, "format");
  if (d.action !== "format") return;
  assert.deepEqual(d.keys.map((k) => k.slot), [0, 1]);
  assert.deepEqual(d.tpm.map((k) => k.slot), [2]);
});

Deno.test("blank with only tpm keys (validation refuses it): no-enrollable-key, nothing formatted", () => {
  const d = decideEncryption("STATE", { kind: "blank" }, enc(TPM), true);
  assert.deepEqual([d.action, d.action === "refuse" && d.code], ["refuse", "no-enrollable-key"]);
});

Deno.test("blank without provisioning's consent is never formatted", () => {
  const d = decideEncryption("STATE", { kind: "blank" }, enc(STATIC), false);
  assert.deepEqual([d.action, d.action === "refuse" && d.code], ["refuse", "no-consent"]);
});

Deno.test("a plain filesystem where encryption is configured is refused, never converted", () => {
  const d = decideEncryption("STATE", { kind: "filesystem", type: "ext4" }, enc(STATIC), true);
  assert.equal(d.action, "refuse");
  if (d.action !== "refuse") return;
  assert.equal(d.code, "plain-filesystem");
  assert.match(d.reason, /never converted in place; to encrypt it, reset the node/);
});

Deno.test("a LUKS2 header with encryption not configured is refused, never formatted", () => {
  const d = decideEncryption("EPHEMERAL", { kind: "luks", slots: [{ slot: 0 }] }, undefined, true);
  assert.deepEqual([d.action, d.action === "refuse" && d.code], ["refuse", "not-configured"]);
});

Deno.test("no encryption and no header: the plain path as before", () => {
  assert.equal(decideEncryption("STATE", { kind: "blank" }, undefined, true).action, "plain");
  const fs = decideEncryption("STATE", { kind: "filesystem", type: "xfs" }, undefined, false);
  assert.equal(fs.action, "plain");
});

Deno.test("a header: try nodeid before the static recovery key, only active matching slots", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }, { slot: 5 }];
  const d = decideEncryption("STATE", { kind: "luks", slots }, enc(STATIC, NODEID, TPM), false);
  assert.equal(d.action, "unlock");
  if (d.action !== "unlock") return;
  assert.deepEqual(d.candidates.map((k) => k.kind), ["nodeid", "static"]);
});

Deno.test("a header with a tpm slot: the TPM is tried first, then nodeid, then static", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }, {
    slot: 2,
    kind: "tpm",
  }];
  const d = decideEncryption("STATE", { kind: "luks", slots }, enc(STATIC, NODEID, TPM), false);
  assert.equal(d.action, "unlock");
  if (d.action !== "unlock") return;
  assert.deepEqual(d.candidates.map((k) => k.kind), ["tpm", "nodeid", "static"]);
});

Deno.test("a header whose slots match no configured key is locked, with the active slots", () => {
  const slots = [{ slot: 7, kind: "static" }, { slot: 1, kind: "static" }];
  const d = decideEncryption("STATE", { kind: "luks", slots }, enc(NODEID), true);
  assert.equal(d.action, "refuse");
  if (d.action !== "refuse") return;
  assert.equal(d.code, "locked");
  assert.match(d.reason, /slot 7 \(static\), slot 1 \(static\)/);
});

Deno.test("unlock outcome: the first key that opened, or locked with every reason", () => {
  const u = concludeUnlock("STATE", [
    { key: NODEID, opened: false, error: "no DMI" },
    { key: STATIC, opened: true },
  ]);
  assert.deepEqual(u, {
    state: "unlocked",
    slot: 0,
    kind: "static",
    reason: "STATE unlocked by slot 0 (static)",
  });
  const l = concludeUnlock("STATE", [{ key: STATIC, opened: false }]);
  assert.equal(l.state, "locked");
  assert.match(l.reason, /slot 0 \(static\): did not open.*never formatted/);
  assert.ok(!l.reason.includes("correct-horse"), "a key is never quoted");
});

Deno.test("unrecognized data under an encrypted volume is refused", () => {
  const d = decideEncryption("STATE", { kind: "unrecognized" }, enc(STATIC), true);
  assert.deepEqual([d.action, d.action === "refuse" && d.code], ["refuse", "unrecognized-data"]);
});
