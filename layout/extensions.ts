/**
 * System extensions, the image's side of the contract: where the imager
 * puts them in the root image, the index it writes (one
 * `name version sha256 size` line each), where machined-init mounts them and
 * the outcome it leaves for machined (one
 * `name version sha256 mounted|refused [reason]` line each). machined-init
 * parses both in Rust (native-ops/init/src/extensions.rs); these are the
 * TypeScript readers.
 * @module
 */

/** The extensions' directory in the root image. */
export const EXTENSIONS_DIR = "/usr/lib/machined/extensions";
/** The index the imager writes and machined-init reads. */
export const EXTENSIONS_INDEX = `${EXTENSIONS_DIR}/index`;
/** Where each extension is mounted: `/opt/extensions/<name>`. */
export const EXTENSIONS_MOUNTS = "/opt/extensions";
/** What machined-init did with each extension (a tmpfs file, rewritten each boot). */
export const EXTENSIONS_OUTCOME = "/run/machined/extensions";
/** At most this many extensions per slot (machined-init refuses a longer index). */
export const MAX_EXTENSIONS = 16;
/** An extension's name: it becomes a file name and a mount point. */
export const EXTENSION_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** One line of the index. */
export interface ExtensionIndexEntry {
  name: string;
  version: string;
  sha256: string;
  size: number;
}

/** What machined-init did with one extension. */
export interface ExtensionOutcome {
  name: string;
  version: string;
  sha256: string;
  state: "mounted" | "refused";
  /** Why it was refused; "" when mounted. */
  reason: string;
}

/**
 * The index's entries; lines that are not four fields with a valid name are
 * skipped (machined-init refuses the whole index for them: the imager never
 * writes one). Pure.
 */
export function parseExtensionIndex(text: string): ExtensionIndexEntry[] {
  const out: ExtensionIndexEntry[] = [];
  for (const line of lines(text)) {
    const f = line.split(/\s+/);
    if (f.length !== 4 || !EXTENSION_NAME.test(f[0])) continue;
    out.push({ name: f[0], version: f[1], sha256: f[2], size: Number(f[3]) });
  }
  return out.slice(0, MAX_EXTENSIONS);
}

/**
 * machined-init's outcome lines. A line it wrote for an index it refused as a
 * whole names `-`. At most {@link MAX_EXTENSIONS} + 1 lines are read. Pure.
 */
export function parseExtensionOutcome(text: string): ExtensionOutcome[] {
  const out: ExtensionOutcome[] = [];
  for (const line of lines(text).slice(0, MAX_EXTENSIONS + 1)) {
    const m = /^(\S+) (\S+) (\S+) (mounted|refused)(?: (.*))?$/.exec(line);
    if (!m) continue;
    const state = m[4] as ExtensionOutcome["state"];
    out.push({
      name: m[1],
      version: m[2],
      sha256: m[3],
      state,
      reason: state === "refused" ? (m[5] ?? "refused") : "",
    });
  }
  return out;
}

function lines(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}
