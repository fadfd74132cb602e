/**
 * Run a short helper program (mkfs) through the process backend and collect
 * its output, failing with a typed {@link CommandError} that keeps the argv,
 * the exit and stderr.
 * @module
 */
import type { ProcessBackend, ProcessExit } from "../../platform/process/mod.ts";

/** PATH for helper programs; machined passes no environment of its own. */
export const TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/** A helper program exited unsuccessfully. */
export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    readonly argv: readonly string[],
    readonly exit: ProcessExit,
    readonly stderr: string,
  ) {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with ${exit.code}`;
    super(`"${argv.join(" ")}" ${how}${stderr ? `: ${stderr.trim()}` : ""}`);
  }
}

/** What a successful run printed. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

async function drain(stream: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!stream) return "";
  const chunks: Uint8Array[] = [];
  for await (const c of stream) chunks.push(c);
  return new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
}

/**
 * Run `argv` to completion.
 * @throws CommandError on a non-zero exit or a signal; SysError when it cannot start.
 */
export async function runCommand(
  process: ProcessBackend,
  argv: string[],
): Promise<CommandOutput> {
  const h = await process.spawn({ argv, env: { PATH: TOOL_PATH } });
  const [stdout, stderr, exit] = await Promise.all([drain(h.stdout), drain(h.stderr), h.exited]);
  if (exit.code !== 0) throw new CommandError(argv, exit, stderr);
  return { stdout, stderr };
}
