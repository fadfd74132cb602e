/**
 * Runs the host tools the imager relies on (apt-get, dpkg-deb, mkfs.vfat,
 * mcopy, zstd, ldd) and turns a failure into a {@link CommandError} that
 * keeps the command line, exit code and stderr.
 */

/** A host tool that exited non-zero or could not be started. */
export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    readonly command: string,
    readonly args: string[],
    readonly code: number,
    readonly stderr: string,
    options?: ErrorOptions,
  ) {
    super(
      `Command "${[command, ...args].join(" ")}" failed with code ${code}: ${stderr.trim()}`,
      options,
    );
  }
}

/** Options of {@link run}. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Start from an empty environment (only `env`). @default false */
  clearEnv?: boolean;
}

/**
 * Run `command` to completion and return its stdout as text.
 * @throws CommandError on a non-zero exit or when the binary is missing.
 */
export async function run(command: string, args: string[], opts: RunOptions = {}): Promise<string> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(command, {
      args,
      cwd: opts.cwd,
      env: opts.env,
      clearEnv: opts.clearEnv,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    throw new CommandError(command, args, -1, `cannot start: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const stderr = new TextDecoder().decode(out.stderr);
  if (out.code !== 0) throw new CommandError(command, args, out.code, stderr);
  return new TextDecoder().decode(out.stdout);
}

/** Whether `binary` is a file in a directory of PATH (a tool the host may lack). */
export async function onPath(binary: string): Promise<boolean> {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin").split(":")) {
    if (await Deno.stat(`${dir}/${binary}`).then((s) => s.isFile, () => false)) return true;
  }
  return false;
}
