/**
 * `deno task image`: build the bootable disk image.
 *
 *   deno task image [--program main.ts | --binary PATH] [--config FILE] [--pki DIR] [--generic]
 *     [--size 2GiB] [--esp-size 512MiB] [--out build/machined.img] [--append "args"]
 *     [--quiet-console] [--compression lz4|zstd] [--zstd-level 9] [--no-code-cache]
 *     [--module NAME]... [--extra SRC:DEST]... [--native-addon PATH|none] [--force]
 *     [--arch amd64|arm64] [--board rpi3]
 *     [--image-version V] [--bundle OUT --signing-key KEY]
 */
import { buildImage, type ImageOptions } from "./build_image.ts";
import { writeImageBundle } from "./image_bundle.ts";
import { last, parseArgs, type ParsedArgs } from "./cli_args.ts";
import { parseSize } from "./progress.ts";
import { DEFAULT_MODULES } from "./versions.ts";
import { parseArch } from "./arch/profiles.ts";
import { parseBoard } from "./rpi/board.ts";

/** Flags and options shared by the image, up and down tasks. */
export const IMAGE_ARGS = {
  flags: ["quiet-console", "force", "help", "no-node-extras", "no-code-cache", "generic"],
  options: [
    "program",
    "binary",
    "config",
    "pki",
    "size",
    "esp-size",
    "out",
    "append",
    "compression",
    "zstd-level",
    "module",
    "extra",
    "native-addon",
    "arch",
    "board",
    "image-version",
  ],
};

/** Turn parsed arguments into {@link ImageOptions}. */
export function imageOptions(a: ParsedArgs): ImageOptions {
  // A generic image carries no config and no CA: booted, it waits in maintenance mode
  // (docs/install.md). Asking for both at once is a mistake, not a preference.
  if (a.flags.has("generic") && (last(a, "config") || last(a, "pki"))) {
    throw new TypeError("--generic builds an image with no config and no CA: drop --config/--pki");
  }
  const size = last(a, "size");
  const espSize = last(a, "esp-size");
  const level = last(a, "zstd-level");
  const compression = last(a, "compression");
  if (compression !== undefined && compression !== "lz4" && compression !== "zstd") {
    throw new TypeError(`--compression "${compression}" is neither lz4 nor zstd`);
  }
  const arch = last(a, "arch");
  const board = last(a, "board");
  return {
    arch: arch ? parseArch(arch) : undefined,
    board: board ? parseBoard(board) : undefined,
    out: last(a, "out"),
    program: last(a, "program"),
    binary: last(a, "binary") ?? Deno.env.get("MACHINED_BINARY"),
    config: last(a, "config"),
    pki: last(a, "pki"),
    size: size ? parseSize(size) : undefined,
    espSize: espSize ? parseSize(espSize) : undefined,
    append: last(a, "append"),
    quietConsole: a.flags.has("quiet-console"),
    compression,
    zstdLevel: level ? Number(level) : undefined,
    codeCache: !a.flags.has("no-code-cache"),
    modules: [...DEFAULT_MODULES, ...(a.values.get("module") ?? [])],
    extraFiles: (a.values.get("extra") ?? []).map((x) => {
      const [source, dest] = x.split(":");
      if (!source || !dest) throw new TypeError(`--extra "${x}" is not SRC:DEST`);
      return { source, dest };
    }),
    nativeAddon: last(a, "native-addon"),
    imageVersion: last(a, "image-version"),
    force: a.flags.has("force"),
    nodeExtras: !a.flags.has("no-node-extras"),
  };
}

if (import.meta.main) {
  const args = parseArgs(Deno.args, {
    flags: IMAGE_ARGS.flags,
    options: [...IMAGE_ARGS.options, "bundle", "signing-key"],
  });
  if (args.flags.has("help")) {
    console.log(
      "deno task image [--program main.ts | --binary PATH] [--config FILE] [--pki DIR] [--generic] " +
        "[--size 2GiB] [--out build/machined.img] [--append ARGS] [--quiet-console] [--force] " +
        "[--arch amd64|arm64] [--board rpi3] [--image-version V] [--bundle OUT --signing-key KEY]",
    );
    Deno.exit(0);
  }
  const bundle = last(args, "bundle");
  const signingKey = last(args, "signing-key");
  if (bundle && !signingKey) throw new TypeError("--bundle needs --signing-key KEY");
  const r = await buildImage(imageOptions(args));
  console.log(r.out);
  if (bundle) console.log(await writeImageBundle(r, bundle, signingKey!));
}
