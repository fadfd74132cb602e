/**
 * A `tpm` slot skipped at format (no TPM then) is sealed and added on a
 * later boot where the TPM can seal it, through the block controllers on
 * fakes: authorised by the key that opened the volume, proven by unsealing
 * before it is reported, no other slot touched. A TPM that refuses to seal
 * leaves the header as it was and says why; a sealed slot that does not
 * prove is removed again.
 */
import assert from "node:assert/strict";
import { TPM_TOKEN, TpmUnavailableError } from "../../platform/crypt/mod.ts";
import { boot, diskState, type Machine, newMachine, PASS, PLAIN } from "./testing_encryption.ts";
import { TestTpm } from "./testing_tpm.ts";

const STATE_DEV = "/dev/vda2";
const NO_TPM = "no TPM device (/dev/tpmrm0)";
/** STATE with a static recovery key in slot 0 and a tpm key in slot 1; EPHEMERAL plain. */
const TPM_STATE = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: static, passphrase: "${PASS}" }
          - { slot: 1, kind: tpm }
`;

type TpmMachine = Machine & { tpm: TestTpm };

async function withTpm(fn: (m: TpmMachine) => Promise<void>): Promise<void> {
  const m = { ...await newMachine(), tpm: await TestTpm.create() };
  try {
    await fn(m);
  } finally {
    await Deno.remove(m.dir, { recursive: true });
  }
}

/** First boot with no TPM answering: STATE formatted with slot 0 only, slot 1 skipped. */
async function provisionWithoutTpm(m: TpmMachine): Promise<void> {
  m.tpm.missing = NO_TPM;
  const n = await boot(m, TPM_STATE);
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.keyNotes, [`slot 1 (tpm) skipped: ${NO_TPM}`]);
  } finally {
    await n.shutdown();
  }
  m.tpm.missing = undefined;
  assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [{ slot: 0, kind: "static" }]);
}

const ops = (m: Machine, from: number) =>
  m.crypt.faults.calls.slice(from).map((c) => `${c.op}:${c.args[1] ?? ""}`);

Deno.test("a tpm slot skipped at format is sealed on the next boot with a TPM: proven, noted nowhere, an event says so", () =>
  withTpm(async (m) => {
    await provisionWithoutTpm(m);
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.keySlots.length === 2)).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "static" });
      assert.deepEqual(vs.keySlots, [
        { slot: 0, kind: "static", proven: true },
        { slot: 1, kind: "tpm", proven: true },
      ]);
      assert.deepEqual(vs.keyNotes, []);
      assert.equal(vs.rotation, null);
      assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [
        { slot: 0, kind: "static" },
        { slot: 1, kind: "tpm" },
      ]);
      assert.equal((await m.crypt.exportToken(STATE_DEV, 1)).type, TPM_TOKEN);
      const ev = n.events.history().filter((e) => e.action === "rotated");
      assert.equal(ev.length, 1);
      assert.match(ev[0].message, /authorised by slot 0\).*tpm slots 1 sealed and proven/);
      assert.doesNotMatch(JSON.stringify(n.events.history()), new RegExp(PASS));
    } finally {
      await n.shutdown();
    }
    // The boot after opens by the TPM and writes nothing.
    const before = await diskState(m);
    const third = await boot(m, TPM_STATE);
    try {
      const vs = (await third.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "tpm" });
      assert.deepEqual(vs.keyNotes, []);
    } finally {
      await third.shutdown();
    }
    assert.equal(await diskState(m), before);
  }));

Deno.test("still no TPM on a later boot: the reason stays in keyNotes and no key is tried for it", () =>
  withTpm(async (m) => {
    await provisionWithoutTpm(m);
    m.tpm.missing = NO_TPM;
    const before = await diskState(m);
    const calls = m.crypt.faults.calls.length;
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
      assert.deepEqual(vs.keyNotes, [`slot 1 (tpm) skipped: ${NO_TPM}`]);
      const tested = ops(m, calls).filter((o) => o.startsWith("testKey"));
      assert.deepEqual(
        tested,
        ["testKey:0"],
        "the unlock only: no argon2id for an add it cannot do",
      );
      assert.equal(n.events.history().filter((e) => e.action === "tpm-skipped").length, 0);
    } finally {
      await n.shutdown();
    }
    assert.equal(await diskState(m), before);
  }));

Deno.test("a TPM that refuses to seal: the slot stays skipped with the reason, nothing else changed", () =>
  withTpm(async (m) => {
    await provisionWithoutTpm(m);
    m.tpm.tpm.seal = () => Promise.reject(new TpmUnavailableError("fake: seal refused"));
    const before = await diskState(m);
    const n = await boot(m, TPM_STATE);
    try {
      const ev = await eventually(() => n.events.history().find((e) => e.action === "tpm-skipped"));
      assert.match(ev.message, /^STATE: slot 1 \(tpm\) skipped: .*seal refused.*nothing else/);
      const vs = (await n.status("STATE", (s) => s.keyNotes.length === 1)).spec;
      assert.match(vs.keyNotes[0], /^slot 1 \(tpm\) skipped: .*seal refused/);
      assert.doesNotMatch(vs.keyNotes[0], /removed again/, "nothing was written to remove");
      assert.deepEqual(vs.keySlots, [{ slot: 0, kind: "static", proven: true }]);
      assert.equal(vs.rotation, null);
    } finally {
      await n.shutdown();
    }
    assert.equal(await diskState(m), before);
  }));

Deno.test("a sealed slot that does not unseal is removed again: the header keeps its slots", () =>
  withTpm(async (m) => {
    await provisionWithoutTpm(m);
    m.tpm.tpm.unseal = () => Promise.reject(new TpmUnavailableError("fake: unseal refused"));
    const calls = m.crypt.faults.calls.length;
    const n = await boot(m, TPM_STATE);
    try {
      const vs = (await n.status("STATE", (s) => s.keyNotes.length === 1)).spec;
      assert.match(
        vs.keyNotes[0],
        /slot 1 \(tpm\) skipped: sealed, but not proven: .*removed again/,
      );
      assert.deepEqual(vs.keySlots, [{ slot: 0, kind: "static", proven: true }]);
      const writes = ops(m, calls).filter((o) => /^(addKey|killSlot)/.test(o));
      assert.deepEqual(writes, ["addKey:1", "killSlot:1"], "only the slot it added is removed");
    } finally {
      await n.shutdown();
    }
    assert.deepEqual((await m.crypt.dump(STATE_DEV)).slots, [{ slot: 0, kind: "static" }]);
  }));

async function eventually<T>(fn: () => T | undefined): Promise<T> {
  const end = Date.now() + 5000;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}
