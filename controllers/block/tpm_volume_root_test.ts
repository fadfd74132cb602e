/**
 * A `tpm` key slot through the block domain's volume code (decideEncryption,
 * formatVolume, unlockVolume: what the provisioner runs) with real parts:
 * tpm2-tools against swtpm, Debian's cryptsetup on a loop device. Formatted
 * with a static key and a TPM-sealed slot, unlocked by the TPM, by the static
 * key once the TPM is fresh (the refusal named), and skipped with its reason
 * when no TPM answers. Needs root (losetup), cryptsetup, swtpm, tpm2-tools.
 */
import assert from "node:assert/strict";
import { enc, S0, T1 } from "./testing_keys.ts";
import {
  generatePolicyKey,
  MemoryTpmPolicy,
  NativeCryptBackend,
  type PolicyKey,
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

const missing = await lacksTpmTools();
const CONFIG = enc(S0, T1);

async function keysFor(tpm: TpmBackend, k: PolicyKey, missing?: string): Promise<TpmKeys> {
  const signed = await signPcrPolicy(
    k.privateKey,
    new Map([[UKI_PCR, await tpm.readPcr(UKI_PCR)]]),
  );
  return {
    tpm,
    policy: new MemoryTpmPolicy(k.publicPem, [signed]),
    unavailable: () => Promise.resolve(missing),
  };
}

Deno.test({
  name:
    `tpm slot with swtpm and cryptsetup: sealed at format, unlocked by the TPM, a fresh TPM falls back to static${
      missing ? ` (needs ${missing})` : ""
    }`,
  ignore: missing !== undefined,
  fn: async () => {
    const loop = await loopDevice(40 << 20);
    const keyDir = await Deno.makeTempDir({ prefix: "tpm-volume-keys-" });
    const first = await startSwtpm(keyDir);
    const fresh = await startSwtpm(keyDir);
    try {
      const policyKey = await generatePolicyKey();
      const v = (tpm: TpmKeys): LuksVolume => ({
        crypt: new NativeCryptBackend({ process: nativeProcessBackend(), keyDir }),
        keys: { smbiosUuid: () => Promise.reject(new Error("no UUID")), tpm },
        volume: "STATE",
        device: loop.device,
        pbkdf: TEST_PBKDF,
      });
      const node = v(await keysFor(first.tpm, policyKey));
      const blank = decideEncryption("STATE", { kind: "blank" }, CONFIG, true);
      assert.equal(blank.action, "format");
      if (blank.action !== "format") return;
      const made = await formatVolume(node, CONFIG, blank.keys, blank.tpm);
      assert.deepEqual(made, { sealed: [1], notes: [] });
      const slots = (await node.crypt.dump(loop.device)).slots;
      assert.deepEqual(slots, [{ slot: 0, kind: "static" }, { slot: 1, kind: "tpm" }]);
      const token = await node.crypt.exportToken(loop.device, 1);
      assert.equal(token.type, TPM_TOKEN);
      assert.deepEqual(token.tpm2_pcrs, [UKI_PCR]);

      const found = decideEncryption("STATE", { kind: "luks", slots }, CONFIG, false);
      assert.equal(found.action, "unlock");
      if (found.action !== "unlock") return;
      assert.deepEqual(found.candidates.map((k) => k.kind), ["tpm", "static"]);
      const byTpm = await unlockVolume(node, found.candidates);
      assert.equal(byTpm.outcome.state === "unlocked" && byTpm.outcome.kind, "tpm");
      assert.deepEqual(byTpm.notes, []);

      const before = await sha256Of(loop.file);
      const cleared = v(await keysFor(fresh.tpm, policyKey));
      const byStatic = await unlockVolume(cleared, found.candidates);
      assert.equal(byStatic.outcome.state === "unlocked" && byStatic.outcome.kind, "static");
      assert.equal(byStatic.notes.length, 1);
      assert.match(byStatic.notes[0], /^slot 1 \(tpm\): The TPM refused to unseal the key/);
      assert.equal(await sha256Of(loop.file), before, "a refused unseal writes nothing");
    } finally {
      await first.stop();
      await fresh.stop();
      await loop.release();
      await Deno.remove(keyDir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    `tpm slot with no TPM answering: skipped at format with the reason, the header holds the static slot only${
      missing ? ` (needs ${missing})` : ""
    }`,
  ignore: missing !== undefined,
  fn: async () => {
    const loop = await loopDevice(40 << 20);
    const keyDir = await Deno.makeTempDir({ prefix: "tpm-volume-keys-" });
    try {
      const v: LuksVolume = {
        crypt: new NativeCryptBackend({ process: nativeProcessBackend(), keyDir }),
        keys: {
          smbiosUuid: () => Promise.reject(new Error("no UUID")),
          tpm: {
            // tpm2-tools pointed at a TPM that is not there, as a node whose device vanished
            tpm: new ToolsTpmBackend({
              process: nativeProcessBackend(),
              tcti: "device:/dev/tpm-absent",
              keyDir,
            }),
            policy: new MemoryTpmPolicy((await generatePolicyKey()).publicPem),
            unavailable: () => Promise.resolve(undefined),
          },
        },
        volume: "STATE",
        device: loop.device,
        pbkdf: TEST_PBKDF,
      };
      const made = await formatVolume(v, CONFIG, [S0], [T1]);
      assert.deepEqual(made.sealed, []);
      assert.match(
        made.notes[0],
        /^slot 1 \(tpm\) skipped: No TPM answers at "device:\/dev\/tpm-absent"/,
      );
      assert.deepEqual((await v.crypt.dump(loop.device)).slots, [{ slot: 0, kind: "static" }]);
    } finally {
      await loop.release();
      await Deno.remove(keyDir, { recursive: true });
    }
  },
});
