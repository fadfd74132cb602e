import assert from "node:assert/strict";
import { UKI_PCR } from "./tpm.ts";
import { generatePolicyKey, signPcrPolicy } from "./tpm_policy_key.ts";
import {
  FileTpmPolicy,
  formatPcrSignature,
  MemoryTpmPolicy,
  parsePcrSignature,
  toolsTpmUnavailable,
  TpmPolicyMissingError,
} from "./tpm_policy.ts";

Deno.test("systemd's .pcrsig JSON: written and read back, one entry per boot phase", async () => {
  const k = await generatePolicyKey();
  const a = await signPcrPolicy(k.privateKey, new Map([[UKI_PCR, new Uint8Array(32)]]));
  const b = await signPcrPolicy(k.privateKey, new Map([[UKI_PCR, new Uint8Array(32).fill(7)]]));
  const text = formatPcrSignature([a, b], "ab".repeat(32));
  const doc = JSON.parse(text);
  assert.deepEqual(Object.keys(doc.sha256[0]), ["pcrs", "pkfp", "pol", "sig"]);
  assert.deepEqual(parsePcrSignature(text), [a, b]);
});

Deno.test(".pcrsig that is not one is refused with a typed error naming where", () => {
  for (const bad of ["{", "{}", '{"sha256": []}', '{"sha256": [{"pcrs": [11], "pol": "zz"}]}']) {
    assert.throws(() => parsePcrSignature(bad, "sig.json"), TpmPolicyMissingError, bad);
  }
  assert.throws(() => parsePcrSignature("{", "sig.json"), /sig\.json is not JSON/);
});

Deno.test("files: a missing key or signature is TpmPolicyMissingError naming the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const p = new FileTpmPolicy(`${dir}/key.pem`, `${dir}/sig.json`);
    await assert.rejects(p.publicKey(), /no policy-signing key at ".*key\.pem"/);
    await assert.rejects(p.signedPolicies(), /no signed PCR policy at ".*sig\.json"/);
    const k = await generatePolicyKey();
    await Deno.writeTextFile(`${dir}/key.pem`, k.publicPem);
    const signed = await signPcrPolicy(k.privateKey, new Map([[UKI_PCR, new Uint8Array(32)]]));
    await Deno.writeTextFile(`${dir}/sig.json`, formatPcrSignature([signed], "00"));
    assert.equal(await p.publicKey(), k.publicPem);
    assert.deepEqual(await p.signedPolicies(), [signed]);
    await Deno.writeTextFile(`${dir}/sig.json`, " ".repeat(65 * 1024));
    await assert.rejects(p.signedPolicies(), /is over 65536 bytes/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("memory source: no key or no policy is TpmPolicyMissingError", async () => {
  await assert.rejects(new MemoryTpmPolicy(undefined).publicKey(), TpmPolicyMissingError);
  await assert.rejects(new MemoryTpmPolicy("pem").signedPolicies(), TpmPolicyMissingError);
});

Deno.test("the node's TPM is unavailable without its device, or without the tools", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(
      await toolsTpmUnavailable(`${dir}/tpmrm0`),
      `no TPM device (${dir}/tpmrm0)`,
    );
    await Deno.writeTextFile(`${dir}/tpmrm0`, "");
    assert.equal(
      await toolsTpmUnavailable(`${dir}/tpmrm0`, `${dir}/tpm2`),
      `the image carries no tpm2-tools (${dir}/tpm2)`,
    );
    await Deno.writeTextFile(`${dir}/tpm2`, "");
    assert.equal(await toolsTpmUnavailable(`${dir}/tpmrm0`, `${dir}/tpm2`), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
