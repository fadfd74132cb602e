/**
 * The kernel command line that makes the program PID 1. There is no shell:
 * `rdinit=` names machined-init (native-ops/init), which mounts /proc, /sys and
 * /dev and then execs its arguments, keeping PID 1. The kernel hands the
 * unknown `KEY=value` words to init as its environment, and everything after
 * `--` becomes init's argv: `/usr/bin/deno run -A ... --v8-flags=...
 * /machined/main.js` (machined's V8 flags, layout/v8_flags.ts), or the
 * compiled binary.
 */
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "../layout/mod.ts";
import { LAYOUT, type ProgramInput } from "./initramfs/initramfs.ts";

/** Options of {@link kernelCmdline}. */
export interface CmdlineOptions {
  program: ProgramInput["kind"];
  /** The serial console (the architecture's, arch/profiles.ts). @default "ttyS0,115200" */
  console?: string;
  /** Quiet console: `quiet loglevel=3`, which also shortens the boot. @default false */
  quiet?: boolean;
  /** Extra kernel arguments, placed before `--`. */
  append?: string;
  /**
   * V8 flags for a JS program (the code cache must be warmed with the same).
   * @default MACHINED_V8_FLAGS (layout/v8_flags.ts)
   */
  v8Flags?: readonly string[];
}

/** The image's default for transparent huge pages: off (see {@link kernelCmdline}). */
export const THP_WORD = "transparent_hugepage=never";

/** Build the kernel command line for a program of kind `opts.program`. */
export function kernelCmdline(opts: CmdlineOptions): string {
  // panic=10: a kernel panic reboots after 10 s instead of hanging, so the
  // loader's boot counting can fall back from a trial slot (docs/upgrade.md).
  // transparent_hugepage=never: with THP on (Debian's default is "always", and
  // "madvise" too starts khugepaged), the kernel raises min_free_kbytes to keep
  // free huge pages, 44 MiB of a 1 GiB node, which MemAvailable loses
  // (docs/decisions.md, "Transparent huge pages off by default"). An operator
  // who wants them adds `transparent_hugepage=madvise` (machine.kernel.args).
  const words = [`console=${opts.console ?? "ttyS0,115200"}`, "panic=10", THP_WORD];
  if (opts.quiet) words.push("quiet", "loglevel=3");
  words.push(`rdinit=${LAYOUT.init}`);
  if (opts.program !== "binary") {
    words.push(`DENO_DIR=${LAYOUT.denoDir}`, "DENO_NO_UPDATE_CHECK=1", "DENO_NO_PROMPT=1");
  }
  if (opts.append?.trim()) words.push(opts.append.trim());
  words.push("--");
  if (opts.program === "binary") words.push(LAYOUT.binary);
  else {
    words.push(LAYOUT.deno, "run", "-A", "--no-config", "--no-lock");
    words.push(...v8FlagsArgs(opts.v8Flags ?? MACHINED_V8_FLAGS), LAYOUT.programEntry);
  }
  return words.join(" ");
}
