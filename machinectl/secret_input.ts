/**
 * Reading a secret (a LUKS2 passphrase) the way an operator expects: typed
 * on the terminal with echo off (raw mode, restored whatever happens), or
 * piped on stdin. A secret is never taken from argv, where `ps` and shell
 * history would keep it. Ending newlines are stripped, as `cryptsetup` does
 * for a typed passphrase.
 * @module
 */
import { CliError } from "./io.ts";
import { escapeLines } from "./terminal_text.ts";

/** The most bytes read from a file or stdin (a passphrase, not a key file). */
export const MAX_SECRET_BYTES = 4096;

/**
 * `question` (escaped: it names what the operator typed) on stderr, one line read
 * without echo; or all of stdin when it is piped. The one place besides the console
 * Io that writes to the terminal, because the prompt must share a line with raw input.
 */
export async function readSecret(question: string): Promise<Uint8Array> {
  if (!Deno.stdin.isTerminal()) return trimNewline(await readAll(Deno.stdin.readable));
  await Deno.stderr.write(new TextEncoder().encode(escapeLines(question)));
  Deno.stdin.setRaw(true);
  try {
    return await readLineRaw(Deno.stdin.readable);
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(new TextEncoder().encode("\n"));
  }
}

/** A secret from a file (`--passphrase-file`; `-` means stdin). */
export async function readSecretFile(path: string): Promise<Uint8Array> {
  if (path === "-") return trimNewline(await readAll(Deno.stdin.readable));
  const file = await Deno.open(path).catch((e) => {
    throw new CliError(`cannot read the passphrase file "${path}": ${(e as Error).message}`, 2);
  });
  return trimNewline(await readAll(file.readable));
}

/** Bytes up to the end of `stream`, at most {@link MAX_SECRET_BYTES}. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let n = 0;
  for await (const c of stream) {
    parts.push(c);
    n += c.length;
    if (n > MAX_SECRET_BYTES) {
      await stream.cancel().catch(() => {});
      throw new CliError(`the passphrase is longer than ${MAX_SECRET_BYTES} bytes`, 2);
    }
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) (out.set(p, at), at += p.length, p.fill(0));
  return out;
}

/**
 * One line from a raw-mode terminal: up to CR or LF; backspace erases,
 * Ctrl-C and Ctrl-D on an empty line cancel. Pure over its stream.
 */
export async function readLineRaw(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const line: number[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return finish(line);
      for (const b of value) {
        if (b === 0x0d || b === 0x0a) return finish(line);
        if (b === 0x03 || (b === 0x04 && line.length === 0)) {
          line.fill(0);
          throw new CliError("cancelled: no passphrase read", 130);
        }
        if (b === 0x7f || b === 0x08) line.pop();
        else line.push(b);
      }
      value.fill(0);
    }
  } finally {
    reader.releaseLock();
  }
}

function finish(line: number[]): Uint8Array {
  const out = Uint8Array.from(line);
  line.fill(0);
  return out;
}

/** Without the trailing `\n` or `\r\n`. */
export function trimNewline(b: Uint8Array): Uint8Array {
  let end = b.length;
  while (end > 0 && (b[end - 1] === 0x0a || b[end - 1] === 0x0d)) end--;
  return b.subarray(0, end);
}
