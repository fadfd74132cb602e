/**
 * Fixtures for the Authenticode verifier's tests: an owner's Secure Boot keys
 * made by pki, EFI images signed with Debian's `sbsign` and judged by `sbverify`,
 * so the verifier is checked against the tools the imager signs with.
 * @module
 */
import { AuthenticodeError } from "./authenticode_error.ts";
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

/** What {@link syntheticPe} lays out. */
export interface SyntheticPe {
  /** Each section's file data, placed back to back after the headers (512-byte aligned). */
  sections: Uint8Array[];
  /** Bytes after the last section (not in any section). */
  trailing?: Uint8Array;
  /** An attribute certificate table to append (8-byte aligned) and name in data directory 4. */
  certTable?: Uint8Array;
  /** @default 0x20b (PE32+) */
  magic?: 0x10b | 0x20b;
}

/** A minimal PE image with the given sections: enough for the Authenticode hash to read it. */
export function syntheticPe(o: SyntheticPe): Uint8Array {
  const magic = o.magic ?? 0x20b;
  const optionalSize = (magic === 0x20b ? 112 : 96) + 16 * 8;
  const optional = 0x40 + 4 + 20;
  const table = optional + optionalSize;
  const sizeOfHeaders = alignTo(table + o.sections.length * 40, 512);
  let at = sizeOfHeaders;
  const placed = o.sections.map((data) => {
    const p = { data, offset: at, size: alignTo(data.length, 512) };
    at += p.size;
    return p;
  });
  const trailing = o.trailing ?? new Uint8Array();
  const certAt = alignTo(at + trailing.length, 8);
  const out = new Uint8Array(o.certTable ? certAt + o.certTable.length : at + trailing.length);
  const v = new DataView(out.buffer);
  v.setUint16(0, 0x5a4d, true);
  v.setUint32(0x3c, 0x40, true);
  v.setUint32(0x40, 0x00004550, true);
  v.setUint16(0x44 + 2, o.sections.length, true);
  v.setUint16(0x44 + 16, optionalSize, true);
  v.setUint16(optional, magic, true);
  v.setUint32(optional + 60, sizeOfHeaders, true);
  v.setUint32(optional + 64, 0x1234_5678, true); // CheckSum
  const directories = optional + (magic === 0x20b ? 112 : 96);
  v.setUint32(directories - 4, 16, true);
  placed.forEach((p, i) => {
    v.setUint32(table + i * 40 + 16, p.size, true);
    v.setUint32(table + i * 40 + 20, p.offset, true);
    out.set(p.data, p.offset);
  });
  out.set(trailing, at);
  if (o.certTable) {
    v.setUint32(directories + 32, certAt, true);
    v.setUint32(directories + 36, o.certTable.length, true);
    out.set(o.certTable, certAt);
  }
  return out;
}

/** One WIN_CERTIFICATE entry (padded to 8 bytes) around `data`. */
export function winCertificate(data: Uint8Array, revision = 0x0200, type = 0x0002): Uint8Array {
  const out = new Uint8Array(alignTo(8 + data.length, 8));
  const v = new DataView(out.buffer);
  v.setUint32(0, 8 + data.length, true);
  v.setUint16(4, revision, true);
  v.setUint16(6, type, true);
  out.set(data, 8);
  return out;
}

function alignTo(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** The AuthenticodeError reason `f` throws, or "accepted" when it returns. */
export function refusalOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof AuthenticodeError) return e.reason;
    throw e;
  }
  return "accepted";
}
