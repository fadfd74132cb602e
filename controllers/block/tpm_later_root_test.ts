/**
 * A `tpm` slot skipped at format, added later by the controllers' rotation
 * pass (rotateToConfig: what EncryptionStep runs once per boot), with real
 * parts: Debian's cryptsetup on a loop device, tpm2-tools against swtpm. The
 * volume is formatted while no TPM answers (slot 1 skipped with the reason),
 * then a pass with swtpm present seals slot 1 with the static key's
 * authority and proves it by unsealing; the TPM then opens the volume, and
 * slot 0 is untouched (the static key still opens it). Needs root
 * (losetup), cryptsetup, swtpm, tpm2-tools.
 */
import assert from "node:assert/strict";
import { enc, S0, T1 } from "./testing_keys.ts";
import {
  generatePolicyKey,
  MemoryTpmPolicy,
  NativeCryptBackend,
  type PolicyKey,
  type SignedPcrPolicy,
  signPcrPolicy,
  TEST_PBKDF,
  ToolsTpmBackend,
  TPM_TOKEN,
  type TpmBackend,
  type TpmKeys,
  UKI_PCR,
} from "../../platform/crypt/mod.ts";
import {
  lacksTpmTools,
  loopDevice,
  sha256Of,
  startSwtpm,
} from "../../platform/crypt/testing_root.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { decideEncryption } from "./decide_encryption.ts";
import { formatVolume, type LuksVolume, unlockVolume } from "./luks_volume.ts";
import { rotateToConfig } from "./rotation_step.ts";

const missing = await lacksTpmTools();
const CONFIG = enc(S0, T1);

Deno.test({
  name:
    `tpm slot skipped at format (no TPM), sealed by a later pass with swtpm, proven, then opens the volume${
      missing ? ` (needs ${missing})` : ""
    }`,
  ignore: missing !== undefined,
  fn: async () => {
    const loop = await loopDevice(40 << 20);
    const keyDir = await Deno.makeTempDir({ prefix: "tpm-later-keys-" });
    const swtpm = await startSwtpm(keyDir);
    try {
      const policyKey = await generatePolicyKey();
      const crypt = new NativeCryptBackend({ process: nativeProcessBackend(), keyDir });
      const v = (tpm: TpmKeys): LuksVolume => ({
        crypt,
        keys: { smbiosUuid: () => Promise.reject(new Error("no UUID")), tpm },
        volume: "STATE",
        device: loop.device,
        pbkdf: TEST_PBKDF,
      });
      // First boot: tpm2-tools pointed at a TPM that is not there.
      const absent = new ToolsTpmBackend({
        process: nativeProcessBackend(),
        tcti: "device:/dev/tpm-absent",
        keyDir,
      });
      const anyPolicy = await signPcrPolicy(
        policyKey.privateKey,
        new Map([[UKI_PCR, new Uint8Array(32)]]),
      );
      const noTpm = v(keysFor(absent, policyKey, anyPolicy));
      const blank = decideEncryption("STATE", { kind: "blank" }, CONFIG, true);
      assert.equal(blank.action, "format");
      if (blank.action !== "format") return;
      const made = await formatVolume(noTpm, CONFIG, blank.keys, blank.tpm);
      assert.deepEqual(made.sealed, []);
      assert.match(made.notes[0], /^slot 1 \(tpm\) skipped: No TPM answers/);

      // A pass on that boot asks the TPM, finds it absent, writes nothing and tries no key.
      const before = await sha256Of(loop.file);
      const still = await rotateToConfig(noTpm, CONFIG);
      assert.equal(still.kind, "none");
      assert.match(still.notes[0], /^slot 1 \(tpm\) skipped: No TPM answers/);
      assert.equal(await sha256Of(loop.file), before, "nothing written without a TPM");

      // A later boot with the TPM and this boot's signed policy: sealed, added, proven.
      const signed = await signPcrPolicy(
        policyKey.privateKey,
        new Map([[UKI_PCR, await swtpm.tpm.readPcr(UKI_PCR)]]),
      );
      const node = v(keysFor(swtpm.tpm, policyKey, signed));
      const t0 = performance.now();
      const r = await rotateToConfig(node, CONFIG);
      const ms = Math.round(performance.now() - t0);
      assert.equal(r.kind, "rotated", r.kind === "none" ? "" : r.reason);
      if (r.kind !== "rotated") return;
      assert.deepEqual(r.result.sealed, [1]);
      assert.deepEqual(r.result.killed, []);
      assert.deepEqual(r.notes, []);
      assert.deepEqual([...r.proven].sort(), [0, 1]);
      assert.match(r.reason, /authorised by slot 0\).*tpm slots 1 sealed and proven/);
      const slots = (await crypt.dump(loop.device)).slots;
      assert.deepEqual(slots, [{ slot: 0, kind: "static" }, { slot: 1, kind: "tpm" }]);
      assert.equal((await crypt.exportToken(loop.device, 1)).type, TPM_TOKEN);
      console.log(`late tpm add (authorise + seal + add + prove): ${ms} ms`);

      // The TPM opens it first; slot 0 still opens it too.
      const found = decideEncryption("STATE", { kind: "luks", slots }, CONFIG, false);
      assert.equal(found.action, "unlock");
      if (found.action !== "unlock") return;
      const byTpm = await unlockVolume(node, found.candidates);
      assert.equal(byTpm.outcome.state === "unlocked" && byTpm.outcome.kind, "tpm");
      byTpm.key?.fill(0);
      const byStatic = await unlockVolume(node, [S0]);
      assert.equal(byStatic.outcome.state === "unlocked" && byStatic.outcome.slot, 0);
      byStatic.key?.fill(0);
      // The header now matches the config: a pass writes nothing.
      const settled = await sha256Of(loop.file);
      assert.equal((await rotateToConfig(node, CONFIG)).kind, "none");
      assert.equal(await sha256Of(loop.file), settled);
    } finally {
      await swtpm.stop();
      await loop.release();
      await Deno.remove(keyDir, { recursive: true });
    }
  },
});

function keysFor(tpm: TpmBackend, k: PolicyKey, signed: SignedPcrPolicy): TpmKeys {
  return {
    tpm,
    policy: new MemoryTpmPolicy(k.publicPem, [signed]),
    unavailable: () => Promise.resolve(undefined),
  };
}
