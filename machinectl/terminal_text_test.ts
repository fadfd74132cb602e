import { deepEqual, equal } from "node:assert/strict";
import { bufferIo } from "./io.ts";
import { CLEAR_SCREEN, esc, escapeLines, escapeText, escapingIo } from "./terminal_text.ts";

Deno.test("escapeText: C0, DEL, C1, bidi, zero-width and separators shown visibly", () => {
  equal(escapeText("a\x1b[2Jb"), String.raw`a\x1b[2Jb`);
  equal(escapeText("\x1b]0;pwned\x07"), String.raw`\x1b]0;pwned\x07`);
  equal(escapeText("a\nb\rc\td\0"), String.raw`a\nb\rc\td\x00`);
  equal(escapeText("\x7f\u0085\u009b"), String.raw`\x7f\x85\x9b`);
  equal(escapeText("\u202a\u202b\u202c\u202d\u202e"), String.raw`\u202a\u202b\u202c\u202d\u202e`);
  equal(escapeText("\u2066\u2067\u2068\u2069"), String.raw`\u2066\u2067\u2068\u2069`);
  equal(
    escapeText("\u200e\u200f\u061c\u200b\u2060\ufeff"),
    String.raw`\u200e\u200f\u061c\u200b\u2060\ufeff`,
  );
  equal(escapeText("\u2028\u2029"), String.raw`\u2028\u2029`);
  equal(escapeText("\u{e0041}"), String.raw`\u{e0041}`);
});

Deno.test("escapeText: ordinary text, other scripts, emoji with ZWJ and backslashes unchanged", () => {
  for (
    const s of [
      "plain /bin/sh -c 'x'",
      "älice 名前 مرحبا",
      "👨‍👩‍👧",
      "ZWNJ\u200cok",
      String.raw`{"a":"b\"c"} \x1b`,
    ]
  ) {
    equal(escapeText(s), s);
  }
});

Deno.test("escapeText is idempotent: escaping twice changes nothing more", () => {
  const s = "x\x1b]0;t\x07\n\r\u009b\u202e\u{e0041}";
  equal(escapeText(escapeText(s)), escapeText(s));
});

Deno.test("escapeLines keeps machinectl's own line breaks and tabs, escapes the rest", () => {
  equal(escapeLines("a\tb\nc\x1b[2J\r\u009b\u202e"), "a\tb\nc" + String.raw`\x1b[2J\r\x9b\u202e`);
});

Deno.test("esc: literal parts kept, every interpolation escaped (numbers too)", () => {
  const id = "a\nb";
  equal(esc`service "${id}": ${3} restarts\n`, String.raw`service "a\nb": 3 restarts` + "\n");
});

Deno.test("escapingIo: out, err and ask escaped; redraw the one control sequence sent; not wrapped twice", async () => {
  const buf = bufferIo();
  const asked: string[] = [];
  buf.ask = (q) => (asked.push(q), Promise.resolve("yes"));
  const io = escapingIo(buf);
  io.out("a\x1b[2J\nb");
  io.err("e\u009b");
  io.redraw!("PID\x1b");
  equal(await io.ask!("sure\x1b? "), "yes");
  deepEqual(buf.stdout, ["a" + String.raw`\x1b[2J` + "\nb", CLEAR_SCREEN + String.raw`PID\x1b`]);
  deepEqual(buf.stderr, [String.raw`e\x9b`]);
  deepEqual(asked, [String.raw`sure\x1b? `]);
  equal(escapingIo(io), io);
});
