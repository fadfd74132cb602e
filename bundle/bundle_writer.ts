/**
 * Write an upgrade bundle from a slot's three files on the build host: hash
 * each (streaming), sign the manifest, then write the head and copy the files
 * after it. Used by `deno task image --bundle` and by tests.
 */
import { createHash } from "node:crypto";
import { encodeBundleHead } from "./bundle_format.ts";
import {
  bundleFileNames,
  type Compatible,
  type Manifest,
  type ManifestExtension,
  signManifest,
  type SlotFileName,
  type UkiSlotFileName,
} from "./manifest.ts";
import type { SigningKey } from "./signing_key.ts";

/** What {@link writeBundle} packs. */
export interface BundleSpec {
  /** Host paths of the slot's files (each slot's signed UKI and the root image for `uki`). */
  files: Record<SlotFileName, string> | Record<UkiSlotFileName, string>;
  /** A Secure Boot bundle: signed UKIs instead of a kernel and an initramfs. */
  boot?: "uki";
  version: string;
  /** The kernel command line without the slot's words (the node adds them); "" for `uki`. */
  cmdline: string;
  compatible: Compatible;
  key: SigningKey;
  /** The system extensions inside root.img (imager/extensions.ts), listed in the manifest. */
  extensions?: readonly ManifestExtension[];
}

/** Write the bundle to `out`; returns its manifest and size. */
export async function writeBundle(
  out: string,
  spec: BundleSpec,
): Promise<{ manifest: Manifest; bytes: number }> {
  const names = bundleFileNames(spec.boot) as Manifest["files"][number]["name"][];
  const paths = spec.files as Record<string, string>;
  const files = [];
  for (const name of names) {
    files.push({ name, ...await hashFile(paths[name]) });
  }
  const manifest: Manifest = {
    format: 1,
    compatible: spec.compatible,
    version: spec.version,
    ...(spec.boot ? { boot: spec.boot } : {}),
    cmdline: spec.cmdline,
    ...(spec.extensions?.length
      ? {
        extensions: spec.extensions.map((e) => ({
          name: e.name,
          version: e.version,
          sha256: e.sha256,
          size: e.size,
        })),
      }
      : {}),
    files,
  };
  const head = encodeBundleHead(await signManifest(manifest, spec.key));
  const tmp = `${out}.tmp`;
  const f = await Deno.open(tmp, { write: true, create: true, truncate: true });
  try {
    await writeAll(f, head);
    for (const name of names) {
      const src = await Deno.open(paths[name]);
      for await (const c of src.readable) await writeAll(f, c);
    }
  } finally {
    f.close();
  }
  await Deno.rename(tmp, out);
  return { manifest, bytes: head.length + files.reduce((n, x) => n + x.size, 0) };
}

/** A file's size and SHA-256, read in chunks. */
export async function hashFile(path: string): Promise<{ size: number; sha256: string }> {
  const h = createHash("sha256");
  let size = 0;
  const f = await Deno.open(path);
  for await (const c of f.readable) {
    h.update(c);
    size += c.length;
  }
  return { size, sha256: h.digest("hex") };
}

async function writeAll(f: Deno.FsFile, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.length) at += await f.write(data.subarray(at));
}
