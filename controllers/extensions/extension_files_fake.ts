/**
 * An in-memory {@link ExtensionFiles} for controller tests.
 * @module
 */
import type { ExtensionFiles } from "./extension_files.ts";

/** An in-memory {@link ExtensionFiles} for tests: seed {@link FakeExtensionFiles.files}. */
export class FakeExtensionFiles implements ExtensionFiles {
  /** Path → text. */
  readonly files = new Map<string, string>();

  read(path: string, maxBytes: number): Promise<string | undefined> {
    const text = this.files.get(path);
    if (text !== undefined && text.length > maxBytes) {
      return Promise.reject(
        new RangeError(`${path} is ${text.length} bytes, more than ${maxBytes}`),
      );
    }
    return Promise.resolve(text);
  }
}
