/**
 * Where TrustedRootsController reads the system bundle and writes the merged one. The real
 * implementation reads with a size cap and replaces the bundle atomically (temporary sibling,
 * fsync, rename), so a service or a machined HTTPS request opening it mid-write reads either
 * the old bundle or the new one, never half of one.
 *
 * @module
 */
import { dirname } from "node:path";
import { writeFileAtomic } from "../../pki/mod.ts";

/** Debian's ca-certificates bundle: in the image (imager/node_extras.ts) and on a dev host. */
export const SYSTEM_BUNDLE_PATH = "/etc/ssl/certs/ca-certificates.crt";
/** The system bundle is refused past this (Debian's is ~220 KiB). */
export const MAX_SYSTEM_BUNDLE_BYTES = 4 * 1024 * 1024;

/** File access of the trust domain. */
export interface BundleFiles {
  /**
   * The text at `path`, undefined when there is no such file.
   * @throws RangeError past `maxBytes`; Deno.errors.* for other failures
   */
  read(path: string, maxBytes: number): Promise<string | undefined>;
  /** Replaces `path` atomically (mode 0644), creating its directory. */
  write(path: string, text: string): Promise<void>;
}

/** The real file system. */
export class DiskBundleFiles implements BundleFiles {
  async read(path: string, maxBytes: number): Promise<string | undefined> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
    try {
      const size = (await file.stat()).size;
      if (size > maxBytes) throw new RangeError(`${path} is ${size} bytes, more than ${maxBytes}`);
      const buf = new Uint8Array(size);
      let at = 0;
      while (at < size) {
        const n = await file.read(buf.subarray(at));
        if (n === null) break;
        at += n;
      }
      return new TextDecoder().decode(buf.subarray(0, at));
    } finally {
      file.close();
    }
  }

  async write(path: string, text: string): Promise<void> {
    await Deno.mkdir(dirname(path), { recursive: true, mode: 0o755 });
    await writeFileAtomic(path, text, { mode: 0o644 });
  }
}
