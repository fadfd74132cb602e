import assert from "node:assert/strict";
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import { mayKill, planRotation } from "./plan_rotation.ts";

const enc = (...keys: VolumeEncryptionConfig["keys"]): VolumeEncryptionConfig => ({
  keys,
  cipher: "aes-xts-plain64",
  sector_size: 4096,
  allow_discards: false,
});
const S0 = { slot: 0, kind: "static" as const, passphrase: "old-passphrase" };
const S2 = { slot: 2, kind: "static" as const, passphrase: "new-passphrase" };
const N1 = { slot: 1, kind: "nodeid" as const };

Deno.test("new static key in a free slot: add and prove it, then kill the old slot", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  const p = planRotation("STATE", slots, enc(N1, S2), 1);
  assert.deepEqual(p, { action: "rotate", add: [S2], prove: [2], kill: [0] });
  assert.equal(mayKill(p, new Set()), false, "phase 2 waits for the proof");
  assert.equal(mayKill(p, new Set([2])), true);
});

Deno.test("header matches the config: nothing to do", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }];
  assert.deepEqual(planRotation("STATE", slots, enc(S0, N1), 0), {
    action: "rotate",
    add: [],
    prove: [],
    kill: [],
  });
});

Deno.test("a configured slot holding another kind is refused: rotate through a free slot", () => {
  const p = planRotation("STATE", [{ slot: 0, kind: "nodeid" }], enc({ ...S0 }), 0);
  assert.equal(p.action, "refuse");
  assert.match(p.action === "refuse" ? p.reason : "", /slot 0 holds a nodeid key/);
  assert.ok(!JSON.stringify(p).includes("old-passphrase"));
});

Deno.test("the unlocking key must stay configured until another is proven", () => {
  const p = planRotation("STATE", [{ slot: 0, kind: "static" }], enc(S2), 0);
  assert.equal(p.action, "refuse");
  assert.match(p.action === "refuse" ? p.reason : "", /slot 0\) is not in the config/);
});

Deno.test("configured tpm slots are never killed by a rotation", () => {
  const slots = [{ slot: 0, kind: "static" }, { slot: 3, kind: "tpm" }];
  const p = planRotation("STATE", slots, enc(S0, { slot: 3, kind: "tpm" }), 0);
  assert.deepEqual(p, { action: "rotate", add: [], prove: [], kill: [] });
});
