/**
 * A digest of everything that goes into an image, so `deno task up` can
 * tell whether the image on disk is current. Host files are represented by
 * path, size and mtime (hashing 100+ MiB of Deno on every `up` would cost
 * more than it saves); inline data is hashed.
 */
import type { CpioEntry } from "./cpio.ts";

/**
 * Hex SHA-256 over the initramfs entries and the other build parameters.
 * Entries are sorted first, so their order does not matter.
 */
export async function fingerprint(
  entries: CpioEntry[],
  params: Record<string, unknown>,
  extraFiles: string[] = [],
): Promise<string> {
  const parts: unknown[] = [params];
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const e of sorted) {
    if (e.type === "file" && e.source) parts.push([e.path, e.mode, await stamp(e.source)]);
    else if (e.type === "file") parts.push([e.path, e.mode, await sha256(e.data!)]);
    else parts.push(e);
  }
  for (const f of extraFiles) parts.push([f, await stamp(f)]);
  const text = JSON.stringify(parts, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  return await sha256(new TextEncoder().encode(text));
}

async function stamp(path: string): Promise<[number, number]> {
  const st = await Deno.stat(path);
  return [st.size, st.mtime?.getTime() ?? 0];
}

async function sha256(bytes: Uint8Array<ArrayBuffer> | Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}
