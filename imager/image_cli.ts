/**
 * `deno task image`: build the bootable disk image.
 *
 *   deno task image [--program main.ts | --binary PATH] [--config FILE] [--pki DIR] [--generic]
 *     [--size 2GiB] [--esp-size 512MiB] [--out build/machined.img] [--append "args"]
 *     [--quiet-console] [--compression lz4|zstd] [--zstd-level 9] [--no-code-cache]
 *     [--module NAME]... [--extra SRC:DEST]... [--extension NAME=FILE]...
 *     [--native-addon PATH|none] [--force]
 *     [--arch amd64|arm64] [--board rpi3]
 *     [--image-version V] [--bundle OUT --signing-key KEY] [--run-dir build/qemu]
 *
 * A bundle build writes its disk image to build/bundle/ (not the disk `up` runs), and no build
 * replaces the disk of a running `up` VM (./image_out.ts).
 */
import { buildImage, type ImageOptions } from "./build_image.ts";
import { writeImageBundle } from "./image_bundle.ts";
import { type CliSpec, last, parseCliOrExit, type ParsedArgs } from "./cli_args.ts";
import { parseSize } from "./progress.ts";
import { DEFAULT_MODULES } from "./versions.ts";
import { hostArch, parseArch } from "./arch/profiles.ts";
import { planImageOut, recordedVm } from "./image_out.ts";
import { parseBoard } from "./rpi/board.ts";
import { parseExtensionArg } from "./extensions.ts";

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
    "extension",
    "native-addon",
    "arch",
    "board",
    "image-version",
    "secure-boot-keys",
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
    secureBootKeys: last(a, "secure-boot-keys"),
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
    extensions: (a.values.get("extension") ?? []).map(parseExtensionArg),
    nativeAddon: last(a, "native-addon"),
    imageVersion: last(a, "image-version"),
    force: a.flags.has("force"),
    nodeExtras: !a.flags.has("no-node-extras"),
  };
}

/** `deno task image`'s usage (stdout on `--help`). */
export const IMAGE_USAGE = `usage: deno task image [options]
  --program main.ts | --binary PATH   what PID 1 runs (default: machined's main.ts)
  --config FILE  --pki DIR  --generic the machine config and CA baked in, or neither
  --size 2GiB  --esp-size 512MiB      disk and ESP sizes
  --out PATH                          the disk image (default build/machined.img;
                                      build/bundle/machined.img with --bundle)
  --append ARGS  --quiet-console      kernel command line
  --compression lz4|zstd  --zstd-level N  --no-code-cache  --no-node-extras
  --module NAME...  --extra SRC:DEST...  --native-addon PATH|none
  --extension NAME=FILE.squashfs...   a system extension in the slot (and its bundle), mounted
                                      read-only on /opt/extensions/NAME
  --arch amd64|arm64  --board rpi3  --image-version V  --force
  --secure-boot-keys DIR              sign the loader and a UKI per slot with DIR's db key and
                                      enroll DIR's PK, KEK and db on the first boot (x86_64)
  --bundle OUT --signing-key KEY      also write a signed upgrade bundle of the slot
  --run-dir build/qemu                where "deno task up" records its VM (never replaced)
  --help                              this text`;

/** `deno task image`'s command line: the shared image options, the bundle and the run dir. */
export const IMAGE_CLI: CliSpec = {
  flags: IMAGE_ARGS.flags,
  options: [...IMAGE_ARGS.options, "bundle", "signing-key", "run-dir"],
  usage: IMAGE_USAGE,
};

/** Usage errors found before building: bad option values, a bundle without a key. */
export function checkImageArgs(a: ParsedArgs): void {
  imageOptions(a);
  if (last(a, "bundle") && !last(a, "signing-key")) {
    throw new TypeError("--bundle needs --signing-key KEY");
  }
}

if (import.meta.main) {
  const args = parseCliOrExit(Deno.args, IMAGE_CLI, checkImageArgs);
  const options = imageOptions(args);
  const bundle = last(args, "bundle");
  const plan = planImageOut({
    out: options.out,
    bundle,
    arch: options.arch ?? hostArch(),
    host: hostArch(),
    vm: await recordedVm(last(args, "run-dir") ?? "build/qemu"),
  });
  if ("refuse" in plan) {
    console.error(`[image] ${plan.refuse}`);
    Deno.exit(1);
  }
  const r = await buildImage({ ...options, out: plan.out });
  console.log(r.out);
  if (bundle) console.log(await writeImageBundle(r, bundle, last(args, "signing-key")!));
}
