/**
 * Where machinectl writes, so commands are testable without touching the
 * console. runMachinectl wraps whatever Io it is given with escapingIo
 * (terminal_text.ts): nothing written here reaches a terminal unescaped.
 */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Replaces the screen with `text` (a `--watch` frame); absent: plain out. */
  redraw?(text: string): void;
  /** Asks a question on the terminal; null when there is none (or no answer). */
  ask?(question: string): Promise<string | null>;
  /**
   * A secret, for tests; absent: secret_input.ts's readSecret (the terminal
   * without echo, or piped stdin). Never from argv.
   */
  secret?(question: string): Promise<Uint8Array>;
}

/** The console. */
export const consoleIo: Io = {
  out: (t) => console.log(t),
  err: (t) => console.error(t),
  ask: (q) => Promise.resolve(Deno.stdin.isTerminal() ? prompt(q) : null),
};

/** Collects output for tests. */
export function bufferIo(): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}

/** A command failed in a way the user should read as one line; `exitCode` is returned. */
export class CliError extends Error {
  override name = "CliError";
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
