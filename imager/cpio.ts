/**
 * A cpio "newc" archive writer (the format the kernel unpacks as an
 * initramfs) and a reader for checking it. Entries are written sorted, with
 * one fixed mtime, uid/gid 0 unless an entry names an owner, and sequential
 * inode numbers, so the same tree always gives the same bytes.
 */

/** An owner other than root, for a directory an unprivileged process must write. */
export interface CpioOwner {
  /** @default 0 */
  uid?: number;
  /** @default 0 */
  gid?: number;
}

/** A directory. */
export interface CpioDir extends CpioOwner {
  type: "dir";
  path: string;
  /** Permission bits. @default 0o755 */
  mode?: number;
}

/** A regular file, with its bytes inline or read from a host path when written. */
export interface CpioFile extends CpioOwner {
  type: "file";
  path: string;
  /** Permission bits. @default 0o644 */
  mode?: number;
  data?: Uint8Array;
  /** Host file to read the bytes from (when `data` is absent). */
  source?: string;
}

/** A symbolic link. */
export interface CpioSymlink {
  type: "symlink";
  path: string;
  target: string;
}

/** A character device node (the kernel needs /dev/console before devtmpfs). */
export interface CpioCharDev {
  type: "chardev";
  path: string;
  mode?: number;
  major: number;
  minor: number;
}

/** One archive member. Paths are absolute-looking ("/usr/bin/deno") or relative. */
export type CpioEntry = CpioDir | CpioFile | CpioSymlink | CpioCharDev;

/** An entry read back from an archive. */
export interface CpioMember {
  path: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  ino: number;
  rdevMajor: number;
  rdevMinor: number;
  data: Uint8Array;
}

/** A malformed or duplicate entry; carries the offending path. */
export class CpioError extends Error {
  override name = "CpioError";
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;
const TRAILER = "TRAILER!!!";
const encoder = new TextEncoder();

/** Normalise an entry path to the archive form: no leading "/", "." for the root. */
export function archivePath(path: string): string {
  const p = path.replace(/^\/+/, "").replace(/\/+$/, "");
  return p === "" ? "." : p;
}

/**
 * Sort entries by archive path and reject duplicates. Sorting by path puts
 * every directory before its children, which the kernel's unpacker needs.
 * @throws CpioError on a duplicate path.
 */
export function sortEntries(entries: CpioEntry[]): CpioEntry[] {
  const sorted = entries
    .map((e) => ({ ...e, path: archivePath(e.path) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].path === sorted[i - 1].path) {
      throw new CpioError(`Duplicate initramfs path "${sorted[i].path}"`, sorted[i].path);
    }
  }
  return sorted;
}

/**
 * Write `entries` as a newc archive to `sink`, ending with the trailer.
 * Returns the number of bytes written.
 * @param mtime the one modification time every entry carries. @default 0
 * @throws CpioError on duplicate paths; NotFound when a `source` is missing.
 */
export async function writeCpio(
  entries: CpioEntry[],
  sink: (chunk: Uint8Array) => Promise<void>,
  mtime = 0,
): Promise<number> {
  let written = 0;
  const emit = async (chunk: Uint8Array) => {
    await sink(chunk);
    written += chunk.length;
  };
  let ino = 1;
  for (const e of sortEntries(entries)) {
    const { mode, data, rdev } = await materialise(e);
    const owner: CpioOwner = e.type === "dir" || e.type === "file" ? e : {};
    const [uid, gid] = [owner.uid ?? 0, owner.gid ?? 0];
    await emit(header(e.path, { ino: ino++, mode, uid, gid, mtime, size: data.length, rdev }));
    if (data.length > 0) await emit(data);
    await emit(new Uint8Array(pad4(data.length)));
  }
  await emit(
    header(TRAILER, { ino: 0, mode: 0, uid: 0, gid: 0, mtime: 0, size: 0, rdev: [0, 0] }),
  );
  const tail = (512 - (written % 512)) % 512;
  if (tail) await emit(new Uint8Array(tail));
  return written;
}

/**
 * Parse a newc archive back into members (up to the trailer).
 * @throws CpioError on a bad magic number or truncated member.
 */
export function readCpio(bytes: Uint8Array): CpioMember[] {
  const out: CpioMember[] = [];
  const text = new TextDecoder();
  let off = 0;
  while (off + 110 <= bytes.length) {
    const magic = text.decode(bytes.subarray(off, off + 6));
    if (magic !== "070701") throw new CpioError(`Bad cpio magic "${magic}" at ${off}`, "");
    const field = (i: number) =>
      parseInt(text.decode(bytes.subarray(off + 6 + i * 8, off + 14 + i * 8)), 16);
    const nameSize = field(11);
    const size = field(6);
    const nameStart = off + 110;
    const path = text.decode(bytes.subarray(nameStart, nameStart + nameSize - 1));
    const dataStart = nameStart + nameSize + pad4(110 + nameSize);
    if (dataStart + size > bytes.length) throw new CpioError(`Truncated member "${path}"`, path);
    if (path === TRAILER) break;
    out.push({
      path,
      ino: field(0),
      mode: field(1),
      uid: field(2),
      gid: field(3),
      mtime: field(5),
      rdevMajor: field(9),
      rdevMinor: field(10),
      data: bytes.slice(dataStart, dataStart + size),
    });
    off = dataStart + size + pad4(size);
  }
  return out;
}

async function materialise(
  e: CpioEntry,
): Promise<{ mode: number; data: Uint8Array; rdev: [number, number] }> {
  switch (e.type) {
    case "dir":
      return { mode: S_IFDIR | (e.mode ?? 0o755), data: new Uint8Array(), rdev: [0, 0] };
    case "symlink":
      return { mode: S_IFLNK | 0o777, data: encoder.encode(e.target), rdev: [0, 0] };
    case "chardev":
      return {
        mode: S_IFCHR | (e.mode ?? 0o600),
        data: new Uint8Array(),
        rdev: [e.major, e.minor],
      };
    case "file": {
      const data = e.data ?? (e.source ? await Deno.readFile(e.source) : undefined);
      if (!data) throw new CpioError(`File "${e.path}" has neither data nor source`, e.path);
      return { mode: S_IFREG | (e.mode ?? 0o644), data, rdev: [0, 0] };
    }
  }
}

function header(
  path: string,
  h: {
    ino: number;
    mode: number;
    uid: number;
    gid: number;
    mtime: number;
    size: number;
    rdev: [number, number];
  },
): Uint8Array {
  const name = encoder.encode(path + "\0");
  const nlink = (h.mode & 0o170000) === S_IFDIR ? 2 : 1;
  const fields = [
    h.ino,
    h.mode,
    h.uid,
    h.gid,
    nlink,
    h.mtime,
    h.size,
    0,
    0,
    h.rdev[0],
    h.rdev[1],
    name.length,
    0,
  ];
  const head = encoder.encode("070701" + fields.map(hex8).join(""));
  const out = new Uint8Array(head.length + name.length + pad4(head.length + name.length));
  out.set(head, 0);
  out.set(name, head.length);
  return out;
}

function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, "0");
}

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}
