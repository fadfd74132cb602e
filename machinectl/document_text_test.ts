import { deepEqual, equal, ok } from "node:assert/strict";
import { parse } from "yaml";
import { toJson, toYaml } from "./document_text.ts";
import { EVIL } from "./escaping_testing.ts";

const RAW = /(?![\n\t\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/u;
const VALUE = {
  id: EVIL,
  [EVIL]: [EVIL, "plain", 3, true, null],
  del: "a\x7f",
  zw: "a\u200bb\ufeff",
  sep: "a\u2028b\u2029",
  tag: "\u{e0041}",
  emoji: "👨‍👩‍👧",
  long: `${"word ".repeat(30)}\n${EVIL}`,
};

Deno.test("toJson: nothing unsafe left raw, and the document parses to the same value", () => {
  for (const indent of [undefined, 2]) {
    const text = toJson(VALUE, indent);
    ok(!RAW.test(text.replaceAll("\n", "")), text);
    deepEqual(JSON.parse(text), VALUE);
  }
  equal(toJson({ a: "x\u009b" }), String.raw`{"a":"x\u009b"}`);
});

Deno.test("toYaml: unsafe strings double-quoted on one line, escaped, same value; plain ones untouched", () => {
  const text = toYaml(VALUE);
  ok(!RAW.test(text), text);
  deepEqual(parse(text), VALUE);
  ok(!text.includes("|"), "no block scalar: a node's line break never starts a printed line");
  ok(!/^\s*\[info\]/m.test(text), text);
  equal(toYaml({ a: "plain", b: "x\u202ey" }), 'a: plain\nb: "x\\u202ey"');
  equal(toYaml({ a: "\u009b" }), 'a: "\\x9b"');
  equal(toYaml({ a: "\u{e0041}" }), 'a: "\\U000e0041"');
});
