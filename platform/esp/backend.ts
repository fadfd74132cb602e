/**
 * The EFI System Partition as the upgrade code sees it: a small file API
 * (list, read, write with fsync, rename, remove, fsync a directory), reached
 * through {@link EspBackend.read} (mounted read-only) or
 * {@link EspBackend.write} (mounted read-write only for the call). The real
 * backend mounts the vfat partition; the fake keeps files in memory and can
 * cut the power at any operation.
 * @module
 */

/** File operations on a mounted ESP; paths are absolute within it (`/B/vmlinuz`). */
export interface EspFiles {
  /** Names in `dir`; [] when it does not exist. */
  list(dir: string): Promise<string[]>;
  /** @throws Deno.errors.NotFound */
  readText(path: string): Promise<string>;
  /** The file's bytes in chunks, read from the medium (not a cached copy where avoidable). */
  readChunks(path: string): AsyncIterable<Uint8Array>;
  /**
   * Create or truncate `path`, write every chunk, fsync it (data, directory
   * entry, FAT). The size is given up front so the real backend can allocate
   * the file's clusters and name them in its directory entry before any data
   * (dir_files.ts): a power cut then never leaves clusters the FAT holds but
   * no file names.
   * @throws EspSizeMismatch when the chunks hold more or fewer bytes than `content.size`.
   */
  writeFile(path: string, content: FileContent): Promise<void>;
  /** rename(2) within the ESP, replacing `to`. */
  rename(from: string, to: string): Promise<void>;
  /** Remove a file; a missing one is not an error. */
  remove(path: string): Promise<void>;
  /** fsync a directory. */
  syncDir(dir: string): Promise<void>;
  /**
   * Where `path` is on the host while the session lasts, for a syscall that
   * opens the file itself (kexec_file_load reads the kernel and initramfs).
   */
  hostPath(path: string): string;
}

/** Access to the ESP: read-only by default, writable only inside {@link write}. */
export interface EspBackend {
  read<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T>;
  write<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T>;
}

/** A file to write: its exact size, known before the first byte, and its bytes. */
export interface FileContent {
  /** The file's length in bytes: what the real backend grows it to before the first chunk. */
  readonly size: number;
  /** The bytes, in order; they must add up to `size` exactly. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

/**
 * The chunks of a write held more or fewer bytes than the size it declared
 * (a caller's bug: bundle files are cut to their manifest size before they
 * reach the ESP).
 */
export class EspSizeMismatch extends Error {
  override name = "EspSizeMismatch";
  constructor(
    readonly path: string,
    readonly declared: number,
    /** Bytes seen when the mismatch was found. */
    readonly seen: number,
    /** Whether the chunks ran past `declared` (else they ended short of it). */
    readonly over: boolean,
  ) {
    super(
      `${JSON.stringify(path)}: declared ${declared} bytes, the chunks held ` +
        `${over ? "more than " : ""}${seen}`,
    );
  }
}

/**
 * `content`'s chunks, checked against its declared size: the backends' one
 * check, so the fake and the real one refuse alike.
 * @throws EspSizeMismatch before a chunk that runs past the size, or at the end when short of it.
 */
export async function* sizedChunks(
  path: string,
  content: FileContent,
): AsyncGenerator<Uint8Array> {
  let seen = 0;
  for await (const c of content.chunks) {
    seen += c.length;
    if (seen > content.size) throw new EspSizeMismatch(path, content.size, seen, true);
    yield c;
  }
  if (seen !== content.size) throw new EspSizeMismatch(path, content.size, seen, false);
}

/** One text file as {@link FileContent}. */
export function textContent(text: string): FileContent {
  return bytesContent(new TextEncoder().encode(text));
}

/** Bytes already in memory as {@link FileContent} (one chunk). */
export function bytesContent(bytes: Uint8Array): FileContent {
  return {
    size: bytes.length,
    chunks: (async function* () {
      yield bytes;
    })(),
  };
}
