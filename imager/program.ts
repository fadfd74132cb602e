/**
 * Turns the `--program` / `--binary` input into what the initramfs ships.
 * A TypeScript entry point is bundled with `deno bundle` into one
 * self-contained JS file (npm dependencies inlined, checked with npm:yaml),
 * so the node needs no module cache and no network at boot, then compacted
 * (no comments or whitespace, ASCII only, names kept: bundle_compact.ts).
 */
import type { ProgramInput } from "./initramfs/initramfs.ts";
import { compactBundle } from "./bundle_compact.ts";
import { run } from "./run.ts";

/** The user's choice: a program for Deno to run, or a compiled binary. */
export interface ProgramOptions {
  /** A .ts/.tsx/.mts entry (bundled), a .js/.mjs file, or a directory holding main.js. */
  program?: string;
  /** A self-contained executable (e.g. from `deno compile`) that runs as PID 1 itself. */
  binary?: string;
}

/**
 * Resolve `opts` into a {@link ProgramInput}, bundling TypeScript into
 * `workDir/main.js` first.
 * @throws TypeError when both or neither of program and binary are given,
 *   or a directory has no main.js.
 * @throws CommandError when `deno bundle` fails.
 */
export async function resolveProgram(
  opts: ProgramOptions,
  workDir: string,
  deno = Deno.execPath(),
): Promise<ProgramInput> {
  if (!!opts.program === !!opts.binary) {
    throw new TypeError("Give exactly one of --program and --binary");
  }
  if (opts.binary) {
    await Deno.stat(opts.binary);
    return { kind: "binary", file: opts.binary };
  }
  const path = opts.program!;
  const st = await Deno.stat(path);
  if (st.isDirectory) {
    if (!(await Deno.stat(`${path}/main.js`).catch(() => null))) {
      throw new TypeError(`Program directory "${path}" has no main.js`);
    }
    return { kind: "dir", dir: path };
  }
  if (/\.(m?js)$/.test(path)) return { kind: "js", file: path };
  if (!/\.(m?ts|tsx)$/.test(path)) {
    throw new TypeError(`Program "${path}" is neither .ts, .js nor a directory`);
  }
  return { kind: "js", file: await bundleProgram(path, `${workDir}/main.js`, deno) };
}

/**
 * Bundle the TypeScript entry `entry` into the self-contained JS file `out`,
 * compacted unless `compact` is false (what the node holds in V8's heap for
 * as long as it runs: bundle_compact.ts).
 * @throws CommandError when `deno bundle` fails.
 */
export async function bundleProgram(
  entry: string,
  out: string,
  deno = Deno.execPath(),
  compact = true,
): Promise<string> {
  await Deno.mkdir(out.slice(0, out.lastIndexOf("/")) || ".", { recursive: true });
  await run(deno, ["bundle", "--quiet", "--platform", "deno", "-o", out, entry]);
  if (compact) await compactBundle(out);
  return out;
}
