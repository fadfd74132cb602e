/**
 * The JSON lines a test harness child prints on stdout, one at a time; other
 * lines (log output) are skipped. Shared by the tests that run a harness in
 * its own process (api/edge/process_split_test.ts, api/host/api_pki_root_test.ts).
 * Not for production.
 */

/**
 * A reader of `stream`: each call resolves to the next line starting with
 * `{`, parsed. @throws Error `${what} exited` when the stream ends first.
 */
export function jsonLineReader<T>(
  stream: ReadableStream<Uint8Array>,
  what = "the harness",
): () => Promise<T> {
  const lines = stream.pipeThrough(new TextDecoderStream()).values();
  let buffer = "";
  return async (): Promise<T> => {
    for (;;) {
      const nl = buffer.indexOf("\n");
      if (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith("{")) return JSON.parse(line);
        continue;
      }
      const r = await lines.next();
      if (r.done) throw new Error(`${what} exited`);
      buffer += r.value;
    }
  };
}
