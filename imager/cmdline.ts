/**
 * The kernel command line that makes the program PID 1. There is no shell
 * and no launcher: `rdinit=` names the Deno binary, the kernel hands the
 * unknown `KEY=value` words to init as its environment, and everything after
 * `--` becomes Deno's argv (`run -A ... /machined/pid1.js`, a prelude that
 * mounts /proc before importing the program at /machined/main.js).
 */
import { LAYOUT, type ProgramInput } from "./initramfs/initramfs.ts";

/** Options of {@link kernelCmdline}. */
export interface CmdlineOptions {
  program: ProgramInput["kind"];
  /** Quiet console: `quiet loglevel=3`, which also shortens the boot. @default false */
  quiet?: boolean;
  /** Extra kernel arguments, placed before `--`. */
  append?: string;
}

/** Build the kernel command line for a program of kind `opts.program`. */
export function kernelCmdline(opts: CmdlineOptions): string {
  const words = ["console=ttyS0,115200"];
  if (opts.quiet) words.push("quiet", "loglevel=3");
  if (opts.program === "binary") {
    words.push(`rdinit=${LAYOUT.binary}`);
  } else {
    words.push(
      `rdinit=${LAYOUT.deno}`,
      `DENO_DIR=${LAYOUT.denoDir}`,
      "DENO_NO_UPDATE_CHECK=1",
      "DENO_NO_PROMPT=1",
    );
  }
  if (opts.append?.trim()) words.push(opts.append.trim());
  if (opts.program !== "binary") {
    words.push("--", "run", "-A", "--no-config", "--no-lock", LAYOUT.prelude);
  }
  return words.join(" ");
}
