import assert from "node:assert/strict";
import { enc, N1, S0, S2, UUID } from "./testing_keys.ts";
import { DEFAULT_PBKDF, FakeCryptBackend, MACHINE_KEY_PBKDF } from "../../platform/crypt/mod.ts";
import { formatVolume, type LuksVolume, rotateVolume, unlockVolume } from "./luks_volume.ts";

function volume(uuid = UUID): LuksVolume & { crypt: FakeCryptBackend } {
  return {
    crypt: new FakeCryptBackend(),
    keys: { smbiosUuid: () => Promise.resolve(uuid) },
    volume: "STATE",
    device: "/dev/vda5",
  };
}

Deno.test("format enrolls every key with a token naming its kind", async () => {
  const v = volume();
  await formatVolume(v, enc(S0, N1), [S0, N1]);
  assert.deepEqual((await v.crypt.dump(v.device)).slots, [
    { slot: 0, kind: "static" },
    { slot: 1, kind: "nodeid" },
  ]);
});

Deno.test("a passphrase slot derives with argon2id, a nodeid slot with PBKDF2, at format and rotation", async () => {
  const v = volume();
  await formatVolume(v, enc(N1, S0), [N1, S0]);
  assert.deepEqual(v.crypt.kdfOf(v.device, 1), MACHINE_KEY_PBKDF, "nodeid first: luksFormat");
  assert.deepEqual(v.crypt.kdfOf(v.device, 0), DEFAULT_PBKDF, "static: luksAddKey");
  const w = volume();
  await formatVolume(w, enc(S0), [S0]);
  assert.deepEqual(w.crypt.kdfOf(w.device, 0), DEFAULT_PBKDF, "static first: luksFormat");
  const key = new TextEncoder().encode(S0.passphrase);
  const r = await rotateVolume(w, enc(S0, N1), 0, key);
  assert.deepEqual(r.added, [1]);
  assert.deepEqual(w.crypt.kdfOf(w.device, 1), MACHINE_KEY_PBKDF, "nodeid added by a rotation");
});

Deno.test("unlock by nodeid; on another board only the static key opens", async () => {
  const v = volume();
  await formatVolume(v, enc(S0, N1), [S0, N1]);
  assert.equal((await unlockVolume(v, [N1, S0])).outcome.state, "unlocked");
  const moved = { ...v, keys: { smbiosUuid: () => Promise.resolve(UUID.replace("4c", "5d")) } };
  const r = await unlockVolume(moved, [N1, S0]);
  assert.deepEqual(r.outcome, {
    state: "unlocked",
    slot: 0,
    kind: "static",
    reason: "STATE unlocked by slot 0 (static)",
  });
});

Deno.test("no DMI and a wrong passphrase: locked, with each reason and no key", async () => {
  const v = volume();
  await formatVolume(v, enc(S0, N1), [S0, N1]);
  const lost = {
    ...v,
    keys: { smbiosUuid: () => Promise.reject(new Error("no /sys/class/dmi")) },
  };
  const r = await unlockVolume(lost, [N1, { ...S0, passphrase: "wrong-passphrase" }]);
  assert.equal(r.outcome.state, "locked");
  assert.match(r.outcome.reason, /slot 1 \(nodeid\): no \/sys\/class\/dmi; slot 0 \(static\)/);
  assert.ok(!r.outcome.reason.includes('passphrase"'));
});

Deno.test("rotation: a failed add keeps every old slot", async () => {
  const v = volume();
  await formatVolume(v, enc(S0, N1), [S0, N1]);
  v.crypt.faults.failNext("addKey", "EIO");
  const key = new TextEncoder().encode(S0.passphrase);
  await assert.rejects(rotateVolume(v, enc(N1, S2), 1, key));
  assert.deepEqual((await v.crypt.dump(v.device)).slots.map((s) => s.slot), [0, 1]);
});

Deno.test("rotation: a new slot that does not prove stops before any kill", async () => {
  const v = volume();
  await formatVolume(v, enc(S0, N1), [S0, N1]);
  v.crypt.testKey = () => Promise.resolve(false);
  const key = new TextEncoder().encode(S0.passphrase);
  const r = await rotateVolume(v, enc(S0, S2), 0, key);
  assert.deepEqual(r.killed, []);
  assert.match(r.stopped ?? "", /old slots kept/);
  assert.deepEqual((await v.crypt.dump(v.device)).slots.map((s) => s.slot), [0, 1, 2]);
});
