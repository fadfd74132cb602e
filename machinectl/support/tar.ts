/**
 * A minimal ustar writer and reader, gzip-compressed with the platform's
 * CompressionStream: enough for a support bundle of text files, without a
 * tar dependency. Names up to 255 bytes (ustar's prefix + name split); entries
 * are regular files (mode 0644 unless given) and directories (0755 unless
 * given), owned by root. A setuid or setgid bit is never written: an archive
 * of a node's files must not hand out privileges when extracted.
 */

/** One file of an archive. */
export interface TarEntry {
  /** Relative path with `/` separators, e.g. `logs/machined.log`. */
  readonly name: string;
  readonly data: Uint8Array;
  /** Modification time, epoch ms. @default the time of writing */
  readonly mtimeMs?: number;
  /** Permission bits; setuid and setgid are cleared. @default 0o644, a directory 0o755 */
  readonly mode?: number;
  /** A directory (ustar type 5): `data` is empty. @default false */
  readonly directory?: boolean;
}

/** The bits an archive may carry: permissions and the sticky bit, never setuid or setgid. */
export const TAR_MODE_MASK = 0o1777;

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * The uncompressed tar of `entries`.
 * @throws RangeError for a name ustar cannot hold, or a directory with data
 */
export function tar(entries: readonly TarEntry[], now = Date.now()): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    if (e.directory && e.data.length > 0) {
      throw new RangeError(`Cannot archive directory "${e.name}" with data`);
    }
    parts.push(header(e, now));
    parts.push(e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(2 * BLOCK));
  return concat(parts);
}

/** `tar(entries)` gzip-compressed (a .tar.gz). */
export async function tarGz(entries: readonly TarEntry[], now = Date.now()): Promise<Uint8Array> {
  return await pipe(tar(entries, now), new CompressionStream("gzip"));
}

/**
 * The files of a .tar.gz (regular files only, or directories too), with their
 * modes, for tests and `support --list`.
 */
export async function readTarGz(
  bytes: Uint8Array,
  options: { directories?: boolean } = {},
): Promise<TarEntry[]> {
  const raw = await pipe(bytes, new DecompressionStream("gzip"));
  const out: TarEntry[] = [];
  for (let off = 0; off + BLOCK <= raw.length;) {
    const h = raw.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    const name = field(h, 0, 100);
    const prefix = field(h, 345, 155);
    const size = parseInt(field(h, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(h[156] || 48);
    off += BLOCK;
    if (type === "0" || (type === "5" && options.directories)) {
      out.push({
        name: prefix ? `${prefix}/${name}` : name,
        data: raw.slice(off, off + size),
        mtimeMs: parseInt(field(h, 136, 12).trim() || "0", 8) * 1000,
        mode: parseInt(field(h, 100, 8).trim() || "0", 8),
        ...(type === "5" ? { directory: true } : {}),
      });
    }
    off += Math.ceil(size / BLOCK) * BLOCK;
  }
  return out;
}

function header(e: TarEntry, now: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const [prefix, name] = splitName(e.name);
  put(h, 0, 100, name);
  const mode = (e.mode ?? (e.directory ? 0o755 : 0o644)) & TAR_MODE_MASK;
  put(h, 100, 8, octal(mode, 7) + "\0");
  put(h, 108, 8, "0000000\0");
  put(h, 116, 8, "0000000\0");
  put(h, 124, 12, octal(e.data.length, 11) + "\0");
  put(h, 136, 12, octal(Math.floor((e.mtimeMs ?? now) / 1000), 11) + "\0");
  put(h, 148, 8, "        "); // checksum counts as spaces while summing
  h[156] = e.directory ? 53 : 48; // "5": a directory, "0": a regular file
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 265, 32, "root");
  put(h, 297, 32, "root");
  put(h, 345, 155, prefix);
  const sum = h.reduce((a, b) => a + b, 0);
  put(h, 148, 8, octal(sum, 6) + "\0 ");
  return h;
}

function splitName(path: string): [string, string] {
  const bytes = enc.encode(path);
  if (path === "" || path.startsWith("/") || path.split("/").includes("..")) {
    throw new RangeError(`Cannot archive "${path}": not a relative path`);
  }
  if (bytes.length <= 100) return ["", path];
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    if (enc.encode(path.slice(0, i)).length <= 155 && enc.encode(path.slice(i + 1)).length <= 100) {
      return [path.slice(0, i), path.slice(i + 1)];
    }
  }
  throw new RangeError(`Cannot archive "${path}": the name is too long for ustar`);
}

function put(h: Uint8Array, at: number, len: number, s: string): void {
  h.set(enc.encode(s).subarray(0, len), at);
}

function field(h: Uint8Array, at: number, len: number): string {
  const f = h.subarray(at, at + len);
  const end = f.indexOf(0);
  return dec.decode(end < 0 ? f : f.subarray(0, end));
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width, "0");
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function pipe(bytes: Uint8Array, transform: CompressionStream | DecompressionStream) {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
