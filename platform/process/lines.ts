/**
 * Turn a byte stream into lines, as a supervisor's log capture wants them:
 * UTF-8 decoded across chunk boundaries, `\n` or `\r\n` endings stripped, and
 * overlong lines split at `maxLength` so one runaway writer cannot exhaust memory.
 * @module
 */

/**
 * Yield the lines of `stream`; a final unterminated line is yielded too.
 * @param maxLength split lines longer than this many characters
 * @default maxLength 65536
 */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  maxLength = 65536,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      yield* split(pending.slice(0, nl).replace(/\r$/, ""), maxLength);
      pending = pending.slice(nl + 1);
    }
    while (pending.length > maxLength) {
      yield pending.slice(0, maxLength);
      pending = pending.slice(maxLength);
    }
  }
  pending += decoder.decode();
  if (pending.length > 0) yield* split(pending, maxLength);
}

function* split(line: string, maxLength: number): Generator<string> {
  if (line.length === 0) yield line;
  for (let i = 0; i < line.length; i += maxLength) yield line.slice(i, i + maxLength);
}
