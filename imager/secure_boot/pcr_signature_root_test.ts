/**
 * The UKI's PCR 11 policy against systemd's own tools: `systemd-measure
 * calculate` for the policy and `sign` (through swtpm) for the .pcrsig bytes.
 * In the root tier although it needs no root: systemd-measure runs through
 * the native process backend (swtpm's start runs its reaper, which waits for
 * every child of the process, so Deno.Command's would be lost: ECHILD), and
 * beside other files under `--parallel` that reaper would take their
 * children's exits; the root tier runs its files one at a time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { peSection } from "../../bundle/authenticode/mod.ts";
import { generateSecureBootKeys } from "../../pki/mod.ts";
import { parsePcrSignature, pcrPolicyDigest } from "../../platform/crypt/mod.ts";
import { startSwtpm } from "../../platform/crypt/testing_root.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { SYSTEMD_STUB_EFI } from "../versions.ts";
import { certPublicKeyPem, MEASURED_SECTIONS, UNSEAL_PHASES } from "./pcr_signature.ts";
import { policySignedUki } from "./secure_esp.ts";

const MEASURE = "/usr/lib/systemd/systemd-measure";
const have = (p: string) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
};
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** A policy-signed UKI on systemd's real stub, from a fresh owner's db key. */
async function signedFixture() {
  const keys = await generateSecureBootKeys("pcr-test");
  const key = { privatePem: keys.db.keyPem, publicPem: certPublicKeyPem(keys.db.certPem) };
  const uki = await policySignedUki({
    stub: await Deno.readFile(SYSTEMD_STUB_EFI),
    kernel: crypto.getRandomValues(new Uint8Array(4096)),
    initramfs: crypto.getRandomValues(new Uint8Array(3000)),
    cmdline: "machined.slot=A machined.root.sha256=" + "ab".repeat(32),
    osRelease: "ID=machined\nVERSION_ID=test\n",
  }, key);
  return { key, uki };
}

/** systemd-measure's arguments for the measured sections of `uki`, written into `dir`. */
async function measureArgs(uki: Uint8Array, dir: string): Promise<string[]> {
  const args = ["--bank=SHA256", `--phase=${UNSEAL_PHASES.join(":")}`, "--json=short"];
  for (const name of MEASURED_SECTIONS) {
    const bytes = peSection(uki, name);
    if (!bytes) continue;
    await Deno.writeFile(join(dir, name.slice(1)), bytes);
    args.push(`--${name.slice(1)}=${join(dir, name.slice(1))}`);
  }
  return args;
}

/**
 * systemd-measure through the native process backend: swtpm's start runs its reaper, which
 * would take Deno.Command's child's exit (ECHILD).
 */
async function measure(args: string[]): Promise<string> {
  const h = await nativeProcessBackend().spawn({
    argv: [MEASURE, ...args],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  const [out, err, exit] = await Promise.all([
    new Response(h.stdout).text(),
    new Response(h.stderr).text(),
    h.exited,
  ]);
  assert.equal(exit.code, 0, `systemd-measure ${args.join(" ")}: ${err}`);
  return out;
}

Deno.test({
  name:
    "a Secure Boot UKI carries .pcrpkey and a .pcrsig whose policy is PolicyPCR of the PCR 11 " +
    "systemd-measure calculates, signed by the db key (needs systemd-measure, systemd-boot-efi)",
  ignore: !have(MEASURE) || !have(SYSTEMD_STUB_EFI),
  async fn() {
    const { key, uki } = await signedFixture();
    assert.equal(new TextDecoder().decode(peSection(uki, ".pcrpkey")), key.publicPem);
    const dir = await Deno.makeTempDir();
    try {
      const doc = JSON.parse(await measure(["calculate", ...await measureArgs(uki, dir)])) as {
        sha256: { phase: string; pcr: number; hash: string }[];
      };
      const pcr11 = doc.sha256.find((v) => v.pcr === 11)!.hash;
      const signed = parsePcrSignature(new TextDecoder().decode(peSection(uki, ".pcrsig")));
      assert.equal(signed.length, 1, "one policy: the phase machined unseals in");
      assert.deepEqual(signed[0].pcrs, [11]);
      const pcr = Uint8Array.from(pcr11.match(/../g)!, (h) => parseInt(h, 16));
      assert.equal(hex(signed[0].policy), hex(await pcrPolicyDigest(new Map([[11, pcr]]))));
      const pub = await crypto.subtle.importKey(
        "spki",
        Uint8Array.from(
          atob(key.publicPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "")),
          (c) => c.charCodeAt(0),
        ),
        { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
        false,
        ["verify"],
      );
      const ok = await crypto.subtle.verify(
        "RSASSA-PKCS1-v1_5",
        pub,
        signed[0].signature.slice(),
        signed[0].policy.slice(),
      );
      assert.ok(ok, "the signature verifies with .pcrpkey");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the .pcrsig is byte for byte what `systemd-measure sign` writes for the same UKI " +
    "(needs systemd-measure, swtpm and tpm2-tools: 252 signs through a TPM trial session)",
  ignore: !have(MEASURE) || !have(SYSTEMD_STUB_EFI) || !have("/usr/bin/swtpm") ||
    !have("/usr/bin/tpm2"),
  async fn() {
    const { key, uki } = await signedFixture();
    const dir = await Deno.makeTempDir();
    const swtpm = await startSwtpm(dir);
    try {
      await Deno.writeTextFile(join(dir, "db.key"), key.privatePem);
      await Deno.writeTextFile(join(dir, "db.pub"), key.publicPem);
      const out = await measure([
        "sign",
        `--tpm2-device=${swtpm.tcti}`,
        `--private-key=${join(dir, "db.key")}`,
        `--public-key=${join(dir, "db.pub")}`,
        ...await measureArgs(uki, dir),
      ]);
      assert.equal(new TextDecoder().decode(peSection(uki, ".pcrsig")), out.trim());
    } finally {
      await swtpm.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
