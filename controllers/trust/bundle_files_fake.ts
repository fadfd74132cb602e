/**
 * An in-memory {@link BundleFiles} for controller tests: seed the system bundle with
 * {@link FakeBundleFiles.files}, inspect what was written and how often.
 *
 * @module
 */
import type { BundleFiles } from "./bundle_files.ts";

/** See the module doc. */
export class FakeBundleFiles implements BundleFiles {
  /** Path → text. */
  readonly files = new Map<string, string>();
  /** Every write, in order. */
  readonly writes: string[] = [];
  /** The next reads of these paths throw this. */
  readonly failRead = new Map<string, Error>();

  read(path: string, maxBytes: number): Promise<string | undefined> {
    const fault = this.failRead.get(path);
    if (fault) return Promise.reject(fault);
    const text = this.files.get(path);
    if (text !== undefined && text.length > maxBytes) {
      return Promise.reject(
        new RangeError(`${path} is ${text.length} bytes, more than ${maxBytes}`),
      );
    }
    return Promise.resolve(text);
  }

  write(path: string, text: string): Promise<void> {
    this.files.set(path, text);
    this.writes.push(path);
    return Promise.resolve();
  }
}
