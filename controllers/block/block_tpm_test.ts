/**
 * `tpm` key slots through the block controllers and the STATE boot path, on
 * fakes (FakeTpmBackend with a throwaway policy-signing key): a volume with a
 * static and a tpm key is formatted with a TPM-sealed slot whose sealed key
 * sits in the header's `machined-tpm` token, a reboot unlocks it by the TPM,
 * a TPM that refuses (fresh state) falls back to the static key, and a node
 * without a TPM skips the slot with the reason in VolumeStatus. The STATE
 * boot path with a `tpm` slot is in state_boot_open_test.ts.
 */
import assert from "node:assert/strict";
import { MemoryTpmPolicy, TPM_TOKEN } from "../../platform/crypt/mod.ts";
import { boot, diskState, type Machine, newMachine, PASS, PLAIN } from "./testing_encryption.ts";
import { TestTpm } from "./testing_tpm.ts";

const STATE_DEV = "/dev/vda2";
/** STATE with a static recovery key in slot 0 and a tpm key in slot 1; EPHEMERAL plain. */
const TPM_STATE = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: static, passphrase: "${PASS}" }
          - { slot: 1, kind: tpm }
`;

async function withTpm(fn: (m: Machine & { tpm: TestTpm }) => Promise<void>): Promise<void> {
  const m = { ...await newMachine(), tpm: await TestTpm.create() };
  try {
    await fn(m);
  } finally {
    await Deno.remove(m.dir, { recursive: true });
  }
}

/** First boot: STATE formatted with both slots and mounted; then shut down. */
async function provision(m: Machine): Promise<void> {
  const n = await boot(m, TPM_STATE);
  try {
    await n.mounted("STATE");
  } finally {
    await n.shutdown();
  }
}

const testedSlots = (m: Machine, from: number) =>
  m.crypt.faults.calls.slice(from).filter((c) => c.op === "testKey").map((c) => c.args[1]);

Deno.test("tpm + static: the format seals slot 1 by the TPM, its sealed key in the header's machined-tpm token", () =>
  withTpm(async (m) => {
    const n = await boot(m, TPM_STATE);
    try {
      const st = await n.mounted("STATE");
      assert.equal(st.spec.source, "/dev/mapper/STATE");
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "static" });
      assert.deepEqual(vs.keySlots, [
        { slot: 0, kind: "static", proven: true },
        { slot: 1, kind: "tpm", proven: false },
      ]);
      assert.deepEqual(vs.keyNotes, []);
      assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [
        { slot: 0, kind: "static" },
        { slot: 1, kind: "tpm" },
      ]);
      const token = await m.crypt.exportToken(STATE_DEV, 1);
      assert.equal(token.type, TPM_TOKEN);
      assert.deepEqual(token.tpm2_pcrs, [11]);
      assert.equal(typeof token.tpm2_private, "string");
      assert.doesNotMatch(JSON.stringify(vs), new RegExp(PASS));
    } finally {
      await n.shutdown();
    }
  }));

Deno.test("tpm + static: a reboot unlocks STATE by the TPM first, and writes nothing", () =>
  withTpm(async (m) => {
    await provision(m);
    const before = await diskState(m);
    const calls = m.crypt.faults.calls.length;
    const n = await boot(m, TPM_STATE);
    try {
      await n.mounted("STATE");
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "tpm" });
      assert.deepEqual(vs.keySlots, [
        { slot: 0, kind: "static", proven: false },
        { slot: 1, kind: "tpm", proven: true },
      ]);
      assert.deepEqual(vs.keyNotes, []);
      assert.deepEqual(testedSlots(m, calls), [1], "the TPM's slot, and no other");
      const unlocked = n.events.history().find((e) => e.action === "unlocked");
      assert.equal(unlocked?.message, "STATE unlocked by slot 1 (tpm)");
    } finally {
      await n.shutdown();
    }
    assert.equal(await diskState(m), before);
  }));

Deno.test("tpm + static: a fresh TPM state refuses, the static key opens; VolumeStatus and the event say why", () =>
  withTpm(async (m) => {
    await provision(m);
    m.tpm.tpm.clear(); // a cleared or replaced TPM: the sealed blob no longer loads
    await m.tpm.signCurrent();
    const n = await boot(m, TPM_STATE);
    try {
      await n.mounted("STATE");
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "static" });
      assert.equal(vs.keyNotes.length, 1);
      assert.match(vs.keyNotes[0], /^slot 1 \(tpm\): The TPM refused to unseal the key \(load\)/);
      const unlocked = n.events.history().find((e) => e.action === "unlocked");
      assert.match(unlocked?.message ?? "", /unlocked by slot 0 \(static\); tried first slot 1/);
      // The configured tpm slot is kept (never killed by a rotation).
      assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots.map((s) => s.slot), [0, 1]);
    } finally {
      await n.shutdown();
    }
  }));

Deno.test("tpm + static: PCR 11 moved without a policy signed for it: refused, the static key opens", () =>
  withTpm(async (m) => {
    await provision(m);
    await m.tpm.tpm.extend(11, new TextEncoder().encode("another UKI"));
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "static" });
      assert.match(vs.keyNotes[0], /slot 1 \(tpm\): .*PCR policy.*matches PCR 11/);
    } finally {
      await n.shutdown();
    }
    // An upgrade brings its own signed policy for the new value: the TPM opens it, no reseal.
    await m.tpm.signCurrent();
    const up = await boot(m, TPM_STATE);
    try {
      const vs = (await up.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "tpm" });
    } finally {
      await up.shutdown();
    }
  }));

Deno.test("no TPM device: the tpm slot is skipped at format with the reason, the static key formats and opens", () =>
  withTpm(async (m) => {
    m.tpm.missing = "no TPM device (/dev/tpmrm0)";
    const n = await boot(m, TPM_STATE);
    try {
      await n.mounted("STATE");
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "static" });
      assert.deepEqual(vs.keySlots, [{ slot: 0, kind: "static", proven: true }]);
      assert.deepEqual(vs.keyNotes, ["slot 1 (tpm) skipped: no TPM device (/dev/tpmrm0)"]);
      assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [{ slot: 0, kind: "static" }]);
      const encrypted = n.events.history().find((e) => e.action === "encrypted");
      assert.match(encrypted?.message ?? "", /slot 1 \(tpm\) skipped: no TPM device/);
    } finally {
      await n.shutdown();
    }
  }));

Deno.test("a node built without a TPM backend skips the tpm slot and says so", async () => {
  const m = await newMachine();
  try {
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.keyNotes, ["slot 1 (tpm) skipped: this node has no TPM backend"]);
    } finally {
      await n.shutdown();
    }
  } finally {
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("no policy-signing key in this boot: the tpm slot is skipped before the TPM seals anything", () =>
  withTpm(async (m) => {
    m.tpm.policy = new MemoryTpmPolicy(undefined);
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.keyNotes, ["slot 1 (tpm) skipped: no policy-signing key"]);
      assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [{ slot: 0, kind: "static" }]);
    } finally {
      await n.shutdown();
    }
  }));
