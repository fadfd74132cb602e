/**
 * Running a short helper program (mkfs, cryptsetup, nft) to completion through
 * a {@link ProcessBackend}: one PATH for every tool, and both pipes drained at
 * once so a chatty tool never blocks on a full pipe. What a non-zero exit
 * means is the caller's: each tool names its own typed error.
 * @module
 */
import type { ProcessBackend, ProcessExit, ProcessHandle } from "./backend.ts";

/** PATH for helper programs; machined passes no environment of its own. */
export const TOOL_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * A tool that exited unsuccessfully: its argv (paths, never secrets), exit and
 * stderr. Each caller names its own subclass (CommandError, CryptsetupError).
 */
export class ToolError extends Error {
  override name = "ToolError";
  constructor(
    readonly argv: readonly string[],
    readonly exit: ProcessExit,
    readonly stderr: string,
  ) {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with ${exit.code}`;
    super(`"${argv.join(" ")}" ${how}${stderr ? `: ${stderr.trim()}` : ""}`);
  }
}

/** What a finished tool printed and how it ended. */
export interface ToolRun {
  stdout: string;
  stderr: string;
  exit: ProcessExit;
}

/**
 * A pipe's text; past `maxBytes` the rest is read and dropped, so a runaway
 * tool costs bounded memory and still exits (its pipe never fills).
 */
export async function drainText(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes = Infinity,
): Promise<string> {
  if (!stream) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of stream) {
    if (size + c.length <= maxBytes) chunks.push(c);
    size += c.length;
  }
  return new TextDecoder().decode(await new Blob(chunks as BlobPart[]).arrayBuffer());
}

/** Both pipes of a started tool, drained together, and its exit. */
export async function collectRun(h: ProcessHandle, maxBytes = Infinity): Promise<ToolRun> {
  const [stdout, stderr, exit] = await Promise.all([
    drainText(h.stdout, maxBytes),
    drainText(h.stderr, maxBytes),
    h.exited,
  ]);
  return { stdout, stderr, exit };
}

/**
 * Run `argv` with {@link TOOL_PATH} to completion; never throws for an exit.
 * @throws SysError when it cannot start.
 */
export async function runTool(process: ProcessBackend, argv: string[]): Promise<ToolRun> {
  return await collectRun(await process.spawn({ argv, env: { PATH: TOOL_PATH } }));
}
