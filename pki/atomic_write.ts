/**
 * Crash-safe file replacement for keys and configs: a reader sees either the
 * old file or the complete new one, and a private key is never readable by
 * others, not even for a moment.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Permission bits of the final file. @default 0o600 */
  mode?: number;
}

/**
 * Write `data` to `path` atomically: write a temporary file in the same
 * directory (created with `mode`, exclusively), fsync it, rename it over
 * `path`, then fsync the directory so the rename itself is durable. On any
 * failure the temporary file is removed and the original is untouched.
 * @throws Deno.errors.* from the file system (e.g. NotFound when the directory is missing)
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tmp-${crypto.randomUUID().slice(0, 8)}`);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  try {
    const file = await Deno.open(tmp, { write: true, createNew: true, mode });
    try {
      await Deno.chmod(tmp, mode); // the umask may have cleared bits we asked for
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** True when `path` exists (any file type). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
