import assert from "node:assert/strict";
import { readLines } from "./lines.ts";

function streamOf(...chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? enc.encode(c) : c));
}

async function collect(s: ReadableStream<Uint8Array>, max?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const l of readLines(s, max)) out.push(l);
  return out;
}

Deno.test("readLines joins chunks, strips CRLF, keeps a final partial line", async () => {
  assert.deepEqual(await collect(streamOf("he", "llo\r\nwor", "ld\n\nta", "il")), [
    "hello",
    "world",
    "",
    "tail",
  ]);
});

Deno.test("readLines decodes UTF-8 split across chunks", async () => {
  const bytes = new TextEncoder().encode("é\n");
  assert.deepEqual(await collect(streamOf(bytes.slice(0, 1), bytes.slice(1))), ["é"]);
});

Deno.test("readLines splits overlong lines", async () => {
  assert.deepEqual(await collect(streamOf("abcdefg", "h\n"), 3), ["abc", "def", "gh"]);
});
