/**
 * How ExtensionStatusController reads the two small files machined-init and
 * the imager leave: the root image's extension index and machined-init's
 * outcome. Read-only; the real one caps the size before reading.
 * @module
 */

/** The largest index or outcome read (16 lines of about 180 bytes). */
export const MAX_EXTENSION_FILE_BYTES = 64 * 1024;

/** Read access for the extensions domain. */
export interface ExtensionFiles {
  /**
   * The text at `path`, undefined when there is no such file.
   * @throws RangeError past `maxBytes`; Deno.errors.* for other failures
   */
  read(path: string, maxBytes: number): Promise<string | undefined>;
}

/** The real file system. */
export class DiskExtensionFiles implements ExtensionFiles {
  async read(path: string, maxBytes: number): Promise<string | undefined> {
    try {
      const size = (await Deno.stat(path)).size;
      if (size > maxBytes) throw new RangeError(`${path} is ${size} bytes, more than ${maxBytes}`);
      return await Deno.readTextFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  }
}
