/**
 * Rotation on a config change through the controllers' pass
 * (rotation_step.ts `rotateToConfig`: what EncryptionStep runs for an open
 * volume once per boot and per change of the keys) on a real kernel:
 * Debian's cryptsetup on a loop device. The new key is added and proven
 * before the old slot is killed; a pass cut between its phases keeps every
 * old slot and the next pass proves, then kills; a change no configured key
 * authorises writes nothing. The mapping and the filesystem are not part of
 * it (this host has no device-mapper: docs/encryption.md). Needs root
 * (losetup) and cryptsetup.
 */
import assert from "node:assert/strict";
import { enc, N1, S0, S2, UUID } from "./testing_keys.ts";
import { type CryptBackend, NativeCryptBackend, TEST_PBKDF } from "../../platform/crypt/mod.ts";
import { lacksCryptTools, loopDevice, sha256Of } from "../../platform/crypt/testing_root.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { formatVolume, type LuksVolume, unlockVolume } from "./luks_volume.ts";
import { rotateToConfig } from "./rotation_step.ts";

const missing = await lacksCryptTools();
const ignore = missing !== undefined;
const needs = missing ? ` (needs ${missing})` : "";

/** A loop device formatted with S0 and N1, as a first boot leaves it. */
async function withFormatted(fn: (v: LuksVolume, file: string) => Promise<void>) {
  const loop = await loopDevice(40 << 20);
  const keyDir = await Deno.makeTempDir({ prefix: "rotation-keys-" });
  try {
    const v: LuksVolume = {
      crypt: new NativeCryptBackend({ process: nativeProcessBackend(), keyDir }),
      keys: { smbiosUuid: () => Promise.resolve(UUID) },
      volume: "STATE",
      device: loop.device,
      pbkdf: TEST_PBKDF,
    };
    await formatVolume(v, enc(S0, N1), [S0, N1]);
    await fn(v, loop.file);
  } finally {
    await loop.release();
    await Deno.remove(keyDir, { recursive: true });
  }
}

const slotsOf = async (v: LuksVolume) => (await v.crypt.dump(v.device)).slots.map((s) => s.slot);
const opens = async (v: LuksVolume, k: typeof S0) =>
  (await unlockVolume(v, [k])).outcome.state === "unlocked";

Deno.test({
  name:
    `rotation pass on cryptsetup: a changed static key is added and proven, then the old slot killed${needs}`,
  ignore,
  fn: () =>
    withFormatted(async (v, file) => {
      const phases: string[] = [];
      const t0 = performance.now();
      const r = await rotateToConfig(v, enc(N1, S2), (phase) => phases.push(phase));
      const ms = Math.round(performance.now() - t0);
      assert.equal(r.kind, "rotated", r.kind === "none" ? "" : r.reason);
      assert.match(
        r.kind === "rotated" ? r.reason : "",
        /by slot 1\): added 2, proven 2, removed 0/,
      );
      assert.deepEqual(phases, ["adding", "proving", "removing"]);
      assert.deepEqual([...r.proven].sort(), [1, 2]);
      assert.deepEqual(await slotsOf(v), [1, 2]);
      assert.equal(await opens(v, S0), false, "the dropped passphrase no longer opens");
      assert.equal(await opens(v, S2), true);
      console.log(`rotation pass (authorise, add, prove, kill) on cryptsetup: ${ms} ms`);
      // The header now matches the config: the next pass writes nothing and tries no key.
      const before = await sha256Of(file);
      assert.equal((await rotateToConfig(v, enc(N1, S2))).kind, "none");
      assert.equal(await sha256Of(file), before);
    }),
});

Deno.test({
  name:
    `rotation pass on cryptsetup: cut before the kill keeps every slot, the next pass proves then kills${needs}`,
  ignore,
  fn: () =>
    withFormatted(async (v) => {
      const cut = { ...v, crypt: failingKill(v.crypt) };
      await assert.rejects(rotateToConfig(cut, enc(N1, S2)), /power lost/);
      assert.deepEqual(await slotsOf(v), [0, 1, 2], "phase 1 done, the old slot kept");
      assert.equal(await opens(v, S0), true);
      const r = await rotateToConfig(v, enc(N1, S2));
      assert.equal(r.kind, "rotated");
      assert.match(r.kind === "rotated" ? r.reason : "", /added none, proven 2, removed 0/);
      assert.deepEqual(await slotsOf(v), [1, 2]);
      assert.equal(await opens(v, S2), true);
    }),
});

Deno.test({
  name:
    `rotation pass on cryptsetup: no configured key opens the header: refused, every byte unchanged${needs}`,
  ignore,
  fn: () =>
    withFormatted(async (v, file) => {
      const otherBoard = {
        ...v,
        keys: { smbiosUuid: () => Promise.resolve(UUID.replace("4c", "12")) },
      };
      const before = await sha256Of(file);
      const r = await rotateToConfig(otherBoard, enc(N1, S2));
      assert.equal(r.kind, "refused");
      assert.match(r.kind === "refused" ? r.reason : "", /no configured key opens the header/);
      assert.equal(await sha256Of(file), before);
      assert.deepEqual(await slotsOf(v), [0, 1]);
    }),
});

/** `crypt` whose killSlot fails, as power lost between the phases. */
function failingKill(crypt: CryptBackend): CryptBackend {
  return new Proxy(crypt, {
    get(target, prop, receiver) {
      if (prop === "killSlot") return () => Promise.reject(new Error("power lost"));
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
