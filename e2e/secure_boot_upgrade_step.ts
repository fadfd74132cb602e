/**
 * Upgrades under Secure Boot, on the Secure Boot case's VM (booted signed
 * from slot A at X): a Secure Boot bundle of Y (each slot's UKI signed with
 * the owner's db key) installs into B and the node comes back on B at Y,
 * still Secure Boot on (the default kexec mode falls back to a cold boot: a
 * UKI entry is never kexec-staged); rollback returns to A. Refused before
 * the ESP changes: the same UKIs signed by another owner's db key
 * (PermissionDenied, untrusted-uki) and a plain bundle (FailedPrecondition,
 * signed-boot). Returns its figures.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, run, writeImageBundle } from "../imager/mod.ts";
import { generateSecureBootKeys } from "../pki/mod.ts";
import { loadSigningKey, writeBundle } from "../bundle/mod.ts";
import { bundleCompatible } from "../imager/mod.ts";
import { machinectl } from "./helpers.ts";

/** What the step needs from the case. */
export interface SecureBootUpgradeDeps {
  client: string;
  port: number;
  work: string;
  program: string;
  /** The owner's Secure Boot keys (the image's). */
  keyDir: string;
  /** The bundle signing key (PKCS#8 PEM file). */
  signingKeyFile: string;
  /** The ESP's files as the host reads them from the disk image. */
  esp: () => Promise<unknown>;
  /** Awaited once Y's bundle is written, before the node is asked anything (the case's checks). */
  afterBuild?: () => Promise<void>;
  /** Checks on the node once it is back on B (the encrypted EPHEMERAL's `tpm` key). */
  onB?: () => Promise<void>;
}

/** The Y image and its Secure Boot bundle, then the refusals, the upgrade and the rollback. */
export async function secureBootUpgradeStep(
  d: SecureBootUpgradeDeps,
  versions: { x: string; y: string },
): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  const y = await buildImage({
    program: d.program,
    // No config in the image: the node's (it trusts signingKeyFile) is on its encrypted STATE.
    out: join(d.work, "y.img"),
    imageVersion: versions.y,
    secureBootKeys: d.keyDir,
  });
  const yBundle = join(d.work, "y.bundle");
  console.log(await writeImageBundle(y, yBundle, d.signingKeyFile));
  await d.afterBuild?.();
  const before = await d.esp();

  const stranger = await strangerBundle(d, y);
  let r = await machinectl(d.client, d.port, "upgrade", "-f", stranger, "--wait=false");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /PermissionDenied|permission.denied/i);
  assert.match(r.err, /untrusted-uki/);

  const plain = join(d.work, "plain.bundle");
  await writeBundle(plain, {
    files: {
      "vmlinuz": y.kernelPath,
      "initramfs.img": y.initramfsPath,
      "root.img": y.rootImagePath,
    },
    version: versions.y,
    cmdline: y.cmdline,
    compatible: bundleCompatible(y.arch),
    key: await loadSigningKey(await Deno.readTextFile(d.signingKeyFile)),
  });
  r = await machinectl(d.client, d.port, "upgrade", "-f", plain, "--wait=false");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition|failed.precondition/i);
  assert.match(r.err, /signed-boot/);
  assert.deepEqual(await d.esp(), before, "a refused bundle changed the ESP");

  let t = performance.now();
  r = await machinectl(d.client, d.port, "upgrade", "-f", yBundle, "--timeout", "15m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(
    r.out,
    new RegExp(`node back on slot B, version ${versions.y.replaceAll(".", "\\.")} and ready`),
  );
  figures.secureBootUpgradeToReadyS = +((performance.now() - t) / 1000).toFixed(1);
  const sb = await machinectl(d.client, d.port, "get", "securebootstatus", "-o", "yaml");
  assert.match(sb.out, /secureBoot: on/);
  await d.onB?.();

  t = performance.now();
  r = await machinectl(d.client, d.port, "rollback", "--timeout", "15m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(
    r.out,
    new RegExp(`node back on slot A, version ${versions.x.replaceAll(".", "\\.")} and ready`),
  );
  figures.secureBootRollbackToReadyS = +((performance.now() - t) / 1000).toFixed(1);
  return figures;
}

/** Y's bundle with its UKIs re-signed by another owner's db key (the bundle key still trusted). */
async function strangerBundle(
  d: SecureBootUpgradeDeps,
  y: Awaited<ReturnType<typeof buildImage>>,
): Promise<string> {
  const dir = join(d.work, "stranger");
  await Deno.mkdir(dir, { recursive: true });
  const keys = await generateSecureBootKeys("stranger");
  await Deno.writeTextFile(join(dir, "db.crt"), keys.db.certPem);
  await Deno.writeTextFile(join(dir, "db.key"), keys.db.keyPem, { mode: 0o600 });
  const resigned: Record<"A" | "B", string> = { A: "", B: "" };
  for (const slot of ["A", "B"] as const) {
    const bare = join(dir, `bare-${slot}.efi`);
    resigned[slot] = join(dir, `machined-${slot.toLowerCase()}.efi`);
    await Deno.copyFile(y.ukiPaths![slot], bare);
    await run("sbattach", ["--remove", bare]); // in place
    await run("sbsign", [
      "--key",
      join(dir, "db.key"),
      "--cert",
      join(dir, "db.crt"),
      "--output",
      resigned[slot],
      bare,
    ]);
  }
  const out = join(d.work, "stranger.bundle");
  await writeBundle(out, {
    boot: "uki",
    files: {
      "machined-a.efi": resigned.A,
      "machined-b.efi": resigned.B,
      "root.img": y.rootImagePath,
    },
    version: "3.0.0-e2e",
    cmdline: "",
    compatible: bundleCompatible(y.arch),
    key: await loadSigningKey(await Deno.readTextFile(d.signingKeyFile)),
  });
  return out;
}
