/**
 * UnlockVolume's node side on fakes: a header no configured key opens stays
 * `locked` until an operator's passphrase opens it; the provisioner then
 * opens the mapping and the volume mounts, and nothing holds the passphrase.
 */
import assert from "node:assert/strict";
import { MOUNT_STATUS, VOLUME_STATUS } from "../../resources/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import {
  boot,
  diskState,
  encrypted,
  newMachine,
  OTHER_BOARD,
  PASS,
  provisionEncrypted,
} from "./testing_encryption.ts";
import { VolumeUnlocker, VolumeUnlockError } from "./volume_unlock.ts";

const WRONG = "not the passphrase at all";
const enc = new TextEncoder();

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => undefined, (e) => e);
  assert.ok(e instanceof VolumeUnlockError, `expected a refusal, got ${e}`);
  assert.doesNotMatch(e.message, new RegExp(PASS + "|" + WRONG));
  return e.code;
}

Deno.test("a locked STATE opens with the operator's passphrase and mounts; a wrong one changes nothing", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const unlocker = new VolumeUnlocker({ crypt: m.crypt });
  const n = await boot(m, encrypted(WRONG), OTHER_BOARD, unlocker);
  try {
    await n.status("STATE", (s) => s.phase === "locked");
    assert.equal(await refusal(unlocker.unlock("STATE", enc.encode(WRONG))), "permission-denied");
    assert.equal(await diskState(m), before, "a wrong passphrase writes nothing");
    const r = await unlocker.unlock("STATE", enc.encode(PASS));
    assert.deepEqual(r, { volume: "STATE", slot: 1, mappingPath: "/dev/mapper/STATE" });
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.equal(vs.locked, false);
    assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "passphrase" });
    assert.deepEqual(vs.keySlots.map((k) => [k.slot, k.kind, k.proven]), [
      [0, "nodeid", false],
      [1, "static", true],
    ]);
    assert.equal(vs.mappingPath, "/dev/mapper/STATE");
    await n.mounted("STATE");
    const ev = n.events.history().filter((e) => e.subject === "volume STATE");
    assert.equal(ev.at(-1)?.action, "unlocked");
    const all = JSON.stringify([n.store.list(VOLUME_STATUS), n.events.history()]);
    assert.doesNotMatch(all, new RegExp(PASS));
    // EPHEMERAL has only a nodeid key: still locked, and a passphrase opens nothing.
    assert.equal(
      await refusal(unlocker.unlock("EPHEMERAL", enc.encode(PASS))),
      "permission-denied",
    );
    const eph = await waitForResource(n.store, MOUNT_STATUS, (r) => r.metadata.id === "EPHEMERAL");
    assert.equal(eph.spec.mounted, false);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("unlock refuses an unknown volume, a bad passphrase size and a volume that is not locked", async () => {
  const m = await newMachine();
  const unlocker = new VolumeUnlocker({ crypt: m.crypt });
  const n = await boot(m, encrypted(), undefined, unlocker);
  try {
    await n.mounted("STATE");
    assert.equal(await refusal(unlocker.unlock("BOOT", enc.encode(PASS))), "not-found");
    assert.equal(await refusal(unlocker.unlock("STATE", new Uint8Array())), "invalid-argument");
    const long = new Uint8Array(513).fill(0x61);
    assert.equal(await refusal(unlocker.unlock("STATE", long)), "invalid-argument");
    assert.equal(await refusal(unlocker.unlock("STATE", enc.encode(PASS))), "failed-precondition");
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("without a LUKS2 backend nothing is locked: failed-precondition", async () => {
  const u = new VolumeUnlocker({});
  u.markLocked("STATE", "/dev/vda2");
  assert.equal(await refusal(u.unlock("STATE", enc.encode(PASS))), "failed-precondition");
});
