/**
 * Run a short helper program (mkfs) through the process backend and collect
 * its output, failing with a typed {@link CommandError} that keeps the argv,
 * the exit and stderr.
 * @module
 */
import { type ProcessBackend, runTool, ToolError } from "../../platform/process/mod.ts";

export { TOOL_PATH } from "../../platform/process/mod.ts";

/** A helper program exited unsuccessfully. */
export class CommandError extends ToolError {
  override name = "CommandError";
}

/** What a successful run printed. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/**
 * Run `argv` to completion.
 * @throws CommandError on a non-zero exit or a signal; SysError when it cannot start.
 */
export async function runCommand(
  process: ProcessBackend,
  argv: string[],
): Promise<CommandOutput> {
  const { stdout, stderr, exit } = await runTool(process, argv);
  if (exit.code !== 0) throw new CommandError(argv, exit, stderr);
  return { stdout, stderr };
}
