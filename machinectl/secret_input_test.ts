import assert from "node:assert/strict";
import { readAll, readLineRaw, trimNewline } from "./secret_input.ts";
import { CliError } from "./io.ts";

const stream = (...chunks: string[]) =>
  ReadableStream.from(chunks.map((c) => new TextEncoder().encode(c)));
const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("a typed line ends at Enter; backspace erases; Ctrl-C cancels", async () => {
  assert.equal(text(await readLineRaw(stream("pass", "x\x7fword\rrest"))), "password");
  assert.equal(text(await readLineRaw(stream("abc"))), "abc");
  await assert.rejects(readLineRaw(stream("ab\x03")), CliError);
  await assert.rejects(readLineRaw(stream("\x04")), CliError);
});

Deno.test("piped input loses its final newline only, and is bounded", async () => {
  assert.equal(text(trimNewline(await readAll(stream("a b \n", "c\r\n")))), "a b \nc");
  await assert.rejects(readAll(stream("x".repeat(5000))), /longer than 4096 bytes/);
});
