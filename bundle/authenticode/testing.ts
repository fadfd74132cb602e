/**
 * Fixtures for the Authenticode verifier's tests: an owner's Secure Boot keys
 * made by pki, EFI images signed with Debian's `sbsign` and judged by `sbverify`,
 * so the verifier is checked against the tools the imager signs with.
 * @module
 */
import { join } from "node:path";
import { generateSecureBootKeys, type SecureBootKeys } from "../../pki/mod.ts";

/** systemd's EFI stub: a real, unsigned PE32+ image with data after its sections. */
export const EFI_STUB = "/usr/lib/systemd/boot/efi/linuxx64.efi.stub";

function onPath(tool: string): boolean {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(join(dir, tool)).isFile) return true;
    } catch { /* not here */ }
  }
  return false;
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Why the sbsign fixtures cannot be made here, or undefined when they can. */
export const SIGNING_MISSING: string | undefined = !onPath("sbsign") || !onPath("sbverify")
  ? "needs sbsign and sbverify (sbsigntool)"
  : !exists(EFI_STUB)
  ? `needs ${EFI_STUB} (systemd-boot-efi)`
  : undefined;

/** An owner's keys written where sbsign and sbverify read them. */
export interface Owner {
  keys: SecureBootKeys;
  dir: string;
  /** db.crt, PEM. */
  dbCert: string;
}

/** Fresh keys for `name`, written as `db.crt`/`db.key` under `parent`. */
export async function makeOwner(parent: string, name: string): Promise<Owner> {
  const keys = await generateSecureBootKeys(name);
  const dir = join(parent, name);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "db.crt"), keys.db.certPem);
  await Deno.writeTextFile(join(dir, "db.key"), keys.db.keyPem, { mode: 0o600 });
  return { keys, dir, dbCert: join(dir, "db.crt") };
}

async function tool(command: string, args: string[]): Promise<{ ok: boolean; text: string }> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const d = new TextDecoder();
  return { ok: out.success, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

/** `image` signed by `owner`'s db key with sbsign (Authenticode, SHA-256), as the imager signs. */
export async function sbsign(owner: Owner, image: Uint8Array): Promise<Uint8Array> {
  const input = await Deno.makeTempFile({ dir: owner.dir, suffix: ".efi" });
  const output = `${input}.signed`;
  await Deno.writeFile(input, image);
  const r = await tool("sbsign", [
    "--key",
    join(owner.dir, "db.key"),
    "--cert",
    owner.dbCert,
    "--output",
    output,
    input,
  ]);
  if (!r.ok) throw new Error(`sbsign failed: ${r.text}`);
  return await Deno.readFile(output);
}

/** Whether sbverify accepts `image` with `dbCert` (PEM file) as its only trust anchor. */
export async function sbverifyAccepts(dbCert: string, image: Uint8Array): Promise<boolean> {
  const file = await Deno.makeTempFile({ suffix: ".efi" });
  try {
    await Deno.writeFile(file, image);
    return (await tool("sbverify", ["--cert", dbCert, file])).ok;
  } finally {
    await Deno.remove(file);
  }
}
