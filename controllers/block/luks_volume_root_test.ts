/**
 * The encrypted volume's life on a loop device with Debian's cryptsetup:
 * provision, lock, unlock by static and by nodeid, rotate, erase, and a
 * header no key opens left byte for byte as it was. Needs root (losetup,
 * cryptsetup); nothing here needs device-mapper (keys are proven with
 * `open --test-passphrase`).
 */
import assert from "node:assert/strict";
import { enc, N1, S0, S2, UUID } from "./testing_keys.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { NativeCryptBackend, TEST_PBKDF } from "../../platform/crypt/mod.ts";
import { lacksCryptTools, loopDevice, sha256Of, tool } from "../../platform/crypt/testing_root.ts";
import { decideEncryption } from "./decide_encryption.ts";
import { formatVolume, type LuksVolume, rotateVolume, unlockVolume } from "./luks_volume.ts";

const missing = await lacksCryptTools();

async function withVolume(fn: (v: LuksVolume, file: string) => Promise<void>) {
  const loop = await loopDevice(40 << 20);
  const keyDir = await Deno.makeTempDir({ prefix: "luks-keys-" });
  try {
    await fn({
      crypt: new NativeCryptBackend({ process: nativeProcessBackend(), keyDir }),
      keys: { smbiosUuid: () => Promise.resolve(UUID) },
      volume: "STATE",
      device: loop.device,
      pbkdf: TEST_PBKDF,
    }, loop.file);
  } finally {
    await loop.release();
    await Deno.remove(keyDir, { recursive: true });
  }
}

/**
 * Each keyslot's `kdf.type`, read from the header by cryptsetup itself
 * (through the native backend: a TPM root test's reaper steals Deno.Command's exits).
 */
async function kdfTypes(device: string): Promise<Record<string, string>> {
  const meta = JSON.parse(await tool("cryptsetup", "luksDump", "--dump-json-metadata", device));
  return Object.fromEntries(
    Object.entries(meta.keyslots as Record<string, { kdf: { type: string } }>).map((
      [slot, k],
    ) => [slot, k.kdf.type]),
  );
}

const ignore = missing !== undefined;
const needs = missing ? ` (needs ${missing})` : "";

Deno.test({
  name: `LUKS2 volume: provision, unlock by nodeid and by static, rotate, erase${needs}`,
  ignore,
  fn: () =>
    withVolume(async (v, file) => {
      const config = enc(S0, N1);
      const blank = decideEncryption("STATE", { kind: "blank" }, config, true);
      assert.equal(blank.action, "format");
      if (blank.action !== "format") return;
      await formatVolume(v, config, blank.keys);

      const slots = (await v.crypt.dump(v.device)).slots;
      assert.deepEqual(slots, [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }]);
      // The header records each slot's derivation: argon2id for the passphrase, PBKDF2 for nodeid.
      assert.deepEqual(await kdfTypes(v.device), { "0": "argon2id", "1": "pbkdf2" });
      const found = decideEncryption("STATE", { kind: "luks", slots }, config, false);
      assert.equal(found.action, "unlock");
      if (found.action !== "unlock") return;
      const byNodeId = await unlockVolume(v, found.candidates);
      assert.equal(byNodeId.outcome.state === "unlocked" && byNodeId.outcome.kind, "nodeid");
      const otherBoard = {
        ...v,
        keys: { smbiosUuid: () => Promise.resolve(UUID.replace("4c4c", "1234")) },
      };
      const byStatic = await unlockVolume(otherBoard, found.candidates);
      assert.equal(byStatic.outcome.state === "unlocked" && byStatic.outcome.kind, "static");

      const r = await rotateVolume(v, enc(N1, S2), 1, byNodeId.key!);
      assert.deepEqual(r, { added: [2], proven: [2], killed: [0], sealed: [], notes: [] });
      assert.deepEqual((await v.crypt.dump(v.device)).slots.map((s) => s.slot), [1, 2]);
      const old = await unlockVolume(otherBoard, [S0]);
      assert.equal(old.outcome.state, "locked", "the killed passphrase no longer opens");
      assert.equal((await unlockVolume(otherBoard, [S2])).outcome.state, "unlocked");

      await v.crypt.erase(v.device);
      assert.equal(await v.crypt.isLuks(v.device), false);
      const head = (await Deno.readFile(file)).subarray(0, 16 << 20);
      assert.ok(head.every((b) => b === 0), "the whole header area is zero");
      for (const k of [N1, S2]) {
        const t = await unlockVolume(v, [k]);
        assert.equal(t.outcome.state, "locked", `slot ${k.slot} opens nothing after erase`);
      }
    }),
});

Deno.test({
  name: `LUKS2 volume: a header no key opens is locked and every byte is unchanged${needs}`,
  ignore,
  fn: () =>
    withVolume(async (v, file) => {
      await formatVolume(v, enc(S0), [S0]);
      const before = await sha256Of(file);
      const config = enc({ ...S0, passphrase: "wrong-passphrase" }, N1);
      const slots = (await v.crypt.dump(v.device)).slots;
      const d = decideEncryption("STATE", { kind: "luks", slots }, config, true);
      assert.equal(d.action, "unlock");
      if (d.action !== "unlock") return;
      const r = await unlockVolume(v, d.candidates);
      assert.equal(r.outcome.state, "locked");
      assert.match(r.outcome.reason, /never formatted/);
      assert.equal(await sha256Of(file), before);
    }),
});
