/**
 * The body of `machinectl validate -c FILE...`: validates each file, prints
 * every error, returns the process exit code. The CLI parses flags and
 * calls this.
 *
 * @module
 */
import { formatConfigErrors } from "./config_error.ts";
import { loadMachineConfig } from "./parse_machine_config.ts";

/** Where {@link validateCommand} writes; defaults to the console. */
export interface ValidateOutput {
  out(line: string): void;
  err(line: string): void;
}

const consoleOutput: ValidateOutput = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/**
 * Validates every file in `paths`, printing `FILE: ok` or each error as
 * `FILE:LINE:COL: PATH: MESSAGE (HINT)` and a count.
 *
 * @returns 0 when every file is valid, 1 when any has errors, 2 when no file was given.
 */
export async function validateCommand(
  paths: readonly string[],
  output: ValidateOutput = consoleOutput,
): Promise<number> {
  if (paths.length === 0) {
    output.err("validate: no config file given (use -c FILE)");
    return 2;
  }
  let failed = false;
  for (const path of paths) {
    const result = await loadMachineConfig(path);
    if (result.ok) {
      output.out(`${path}: ok`);
      continue;
    }
    failed = true;
    output.err(formatConfigErrors(result.errors));
    const n = result.errors.length;
    output.err(`${path}: ${n} error${n === 1 ? "" : "s"}`);
  }
  return failed ? 1 : 0;
}
