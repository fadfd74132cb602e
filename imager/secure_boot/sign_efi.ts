/**
 * Signing EFI binaries and making the files that enroll the owner's keys,
 * with Debian's tools: sbsigntool (`sbsign`, Authenticode) and efitools
 * (`cert-to-efi-sig-list`, `sign-efi-sig-list`: EFI signature lists and the
 * time-based authenticated variables systemd-boot enrolls). Every output is
 * reproducible: the RSA PKCS#1 v1.5 signatures are deterministic, the
 * variables' timestamp is the build's SOURCE_DATE_EPOCH and the owner GUID is
 * derived from the PK certificate.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { run } from "../run.ts";
import { SECURE_BOOT_KEY_NAMES, type SecureBootKeys } from "../../pki/mod.ts";

/** The Debian packages these steps need (imager/DEBIAN_PACKAGES lists them). */
export const SECURE_BOOT_TOOLS = [
  "sbsign",
  "sbverify",
  "cert-to-efi-sig-list",
  "sign-efi-sig-list",
];

/** Write the keys as files the tools read, in `dir` (keys 0600). */
export async function writeKeyFiles(keys: SecureBootKeys, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const name of SECURE_BOOT_KEY_NAMES) {
    await Deno.writeTextFile(join(dir, `${name}.crt`), keys[name].certPem);
    await Deno.writeTextFile(join(dir, `${name}.key`), keys[name].keyPem, { mode: 0o600 });
  }
}

/**
 * Sign the EFI binary `input` with the db key into `output` (Authenticode,
 * SHA-256), as the firmware verifies it against the enrolled db.
 * @throws CommandError when sbsign fails.
 */
export async function signEfi(keyDir: string, input: string, output: string): Promise<void> {
  await run("sbsign", [
    "--key",
    join(keyDir, "db.key"),
    "--cert",
    join(keyDir, "db.crt"),
    "--output",
    output,
    input,
  ]);
}

/** Whether `file` carries a signature the db certificate verifies (sbverify). */
export async function verifiesWithDb(keyDir: string, file: string): Promise<boolean> {
  const out = await new Deno.Command("sbverify", {
    args: ["--cert", join(keyDir, "db.crt"), file],
    stdout: "null",
    stderr: "null",
  }).output();
  return out.success;
}

/** The owner GUID of the signature lists: derived from the PK certificate, so rebuilds agree. */
export function ownerGuid(pkCertPem: string): string {
  const h = createHash("sha256").update("machined secure boot owner\0").update(pkCertPem).digest();
  h[6] = (h[6] & 0x0f) | 0x40; // version 4 layout, content-derived
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * `PK.auth`, `KEK.auth` and `db.auth` in `outDir`: each certificate as a
 * signature list, signed by the key one level up (PK by itself, KEK by PK,
 * db by KEK) with `epoch` as the variable's timestamp. systemd-boot enrolls
 * them from `/loader/keys/<name>/` while the firmware is in Setup Mode.
 * @throws CommandError when an efitools command fails.
 */
export async function writeEnrollmentFiles(
  keyDir: string,
  outDir: string,
  o: { pkCertPem: string; epoch: number },
): Promise<string[]> {
  await Deno.mkdir(outDir, { recursive: true });
  const guid = ownerGuid(o.pkCertPem);
  const time = new Date(o.epoch * 1000).toISOString().slice(0, 19).replace("T", " ");
  const signer: Record<string, string> = { PK: "PK", KEK: "PK", db: "KEK" };
  const written: string[] = [];
  for (const name of SECURE_BOOT_KEY_NAMES) {
    const esl = join(outDir, `${name}.esl`);
    await run("cert-to-efi-sig-list", ["-g", guid, join(keyDir, `${name}.crt`), esl]);
    const auth = join(outDir, `${name}.auth`);
    await run("sign-efi-sig-list", [
      "-t",
      time,
      "-g",
      guid,
      "-k",
      join(keyDir, `${signer[name]}.key`),
      "-c",
      join(keyDir, `${signer[name]}.crt`),
      name,
      esl,
      auth,
    ]);
    await Deno.remove(esl);
    written.push(auth);
  }
  return written;
}
