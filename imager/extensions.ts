/**
 * System extensions (`deno task image --extension name=file.squashfs`):
 * squashfs files shipped inside the slot's root image at
 * `/usr/lib/machined/extensions/<name>.squashfs`, listed with their version,
 * size and SHA-256 in `/usr/lib/machined/extensions/index`. The root image's
 * hash (loader entry, signed UKI, signed bundle manifest) therefore covers
 * each extension's bytes: no second signature. machined-init hashes each one
 * again before it mounts it read-only on `/opt/extensions/<name>`
 * (native-ops/init/src/extensions.rs). An extension names its own version in
 * `/usr/lib/extension-release.d/extension-release.<name>` (systemd-sysext's
 * file): `ID=machined` (or `_any`) and `SYSEXT_VERSION_ID=`.
 * @module
 */
import type { Rootfs } from "./initramfs/rootfs.ts";
import { sha256File } from "./root_image.ts";
import { run } from "./run.ts";
import {
  EXTENSION_NAME,
  EXTENSIONS_DIR,
  EXTENSIONS_INDEX,
  EXTENSIONS_MOUNTS,
  MAX_EXTENSIONS,
} from "../layout/mod.ts";

/** The largest extension accepted (it is hashed at every boot). */
export const MAX_EXTENSION_BYTES = 256 << 20;

const NAME = EXTENSION_NAME;
const VERSION = /^[A-Za-z0-9][\w.+~-]{0,63}$/;

/** An extension as given on the command line. */
export interface ExtensionSource {
  name: string;
  path: string;
}

/** An extension as shipped: what the index and a bundle's manifest record. */
export interface ExtensionImage extends ExtensionSource {
  version: string;
  sha256: string;
  size: number;
}

/**
 * `name=file.squashfs` → its parts. Pure.
 * @throws TypeError for a missing part or a name that cannot be a path.
 */
export function parseExtensionArg(arg: string): ExtensionSource {
  const eq = arg.indexOf("=");
  const name = eq < 0 ? "" : arg.slice(0, eq);
  const path = eq < 0 ? "" : arg.slice(eq + 1);
  if (!name || !path) throw new TypeError(`--extension "${arg}" is not NAME=FILE.squashfs`);
  if (!NAME.test(name)) {
    throw new TypeError(
      `--extension name "${name}" must be 1-32 of a-z, 0-9, "-", "_" (starting with a letter or digit)`,
    );
  }
  return { name, path };
}

/**
 * The version an extension-release file declares, checking that it is for
 * this OS (`ID=machined` or `_any`). Pure.
 * @throws TypeError naming the extension and what is wrong.
 */
export function parseExtensionRelease(name: string, text: string): string {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)=(.*?)\s*$/.exec(line);
    if (m) fields.set(m[1], m[2].replace(/^(["'])(.*)\1$/, "$2"));
  }
  const id = fields.get("ID");
  if (id !== "machined" && id !== "_any") {
    throw new TypeError(
      `extension "${name}": its extension-release says ID=${id ?? "(none)"}, not machined or _any`,
    );
  }
  const version = fields.get("SYSEXT_VERSION_ID") ?? "";
  if (!VERSION.test(version)) {
    throw new TypeError(
      `extension "${name}": SYSEXT_VERSION_ID "${version}" is not a version (1-64 of A-Z a-z 0-9 . + ~ - _)`,
    );
  }
  return version;
}

/** The index text machined-init parses: `name version sha256 size` per line. Pure. */
export function extensionIndex(exts: readonly ExtensionImage[]): string {
  return "# name version sha256 size (deno task image --extension)\n" +
    exts.map((e) => `${e.name} ${e.version} ${e.sha256} ${e.size}\n`).join("");
}

/**
 * Check each extension on the host: unique names, at most
 * {@link MAX_EXTENSIONS}, a squashfs of at most {@link MAX_EXTENSION_BYTES}
 * carrying its extension-release file (read with `unsquashfs -cat`), hashed.
 * @throws TypeError for a refused extension, CommandError from unsquashfs.
 */
export async function readExtensions(
  sources: readonly ExtensionSource[],
): Promise<ExtensionImage[]> {
  if (sources.length > MAX_EXTENSIONS) {
    throw new TypeError(`${sources.length} extensions: at most ${MAX_EXTENSIONS}`);
  }
  const out: ExtensionImage[] = [];
  for (const s of sources) {
    if (out.some((e) => e.name === s.name)) {
      throw new TypeError(`extension "${s.name}" given twice`);
    }
    const size = (await Deno.stat(s.path)).size;
    if (size > MAX_EXTENSION_BYTES) {
      throw new TypeError(
        `extension "${s.name}" (${s.path}) is ${size} bytes: at most ${MAX_EXTENSION_BYTES}`,
      );
    }
    const release = `usr/lib/extension-release.d/extension-release.${s.name}`;
    const text = await run("unsquashfs", ["-cat", s.path, release]).catch((e) => {
      throw new TypeError(
        `extension "${s.name}" (${s.path}): not a squashfs with /${release}: ${
          e instanceof Error ? e.message : e
        }`,
        { cause: e },
      );
    });
    const version = parseExtensionRelease(s.name, text);
    out.push({ ...s, version, size, sha256: await sha256File(s.path) });
  }
  return out;
}

/** Ship `exts` in the root tree: the files, the index and their mount points. */
export function addExtensions(root: Rootfs, exts: readonly ExtensionImage[]): void {
  if (exts.length === 0) return;
  for (const e of exts) {
    root.copy(`${EXTENSIONS_DIR}/${e.name}.squashfs`, e.path, 0o444);
    root.dir(`${EXTENSIONS_MOUNTS}/${e.name}`);
  }
  root.file(EXTENSIONS_INDEX, extensionIndex(exts), 0o444);
}
