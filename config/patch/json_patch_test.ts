import { deepEqual, equal, throws } from "node:assert/strict";
import { applyJsonPatch, type PatchOperation } from "./json_patch.ts";
import { formatPointer, parsePointer } from "./json_pointer.ts";
import type { JsonValue } from "./json_value.ts";
import { PatchError } from "./patch_error.ts";

const apply = (doc: JsonValue, ops: PatchOperation[]) => applyJsonPatch(doc, ops);

function refusal(doc: JsonValue, ops: PatchOperation[]): PatchError {
  const before = structuredClone(doc);
  try {
    apply(doc, ops);
  } catch (e) {
    if (!(e instanceof PatchError)) throw e;
    deepEqual(doc, before, "a refused patch leaves its input as it was");
    return e;
  }
  throw new Error("expected a refusal");
}

Deno.test("RFC 6902 appendix A: add, remove, replace, move, copy, test", () => {
  deepEqual(apply({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }]), {
    foo: "bar",
    baz: "qux",
  });
  deepEqual(apply({ foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }]), {
    foo: ["bar", "qux", "baz"],
  });
  deepEqual(apply({ baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }]), { foo: "bar" });
  deepEqual(apply({ foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }]), {
    foo: ["bar", "baz"],
  });
  deepEqual(apply({ baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }]), {
    baz: "boo",
    foo: "bar",
  });
  deepEqual(
    apply({ foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } }, [
      { op: "move", from: "/foo/waldo", path: "/qux/thud" },
    ]),
    { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } },
  );
  deepEqual(
    apply({ foo: ["all", "grass", "cows", "eat"] }, [{
      op: "move",
      from: "/foo/1",
      path: "/foo/3",
    }]),
    { foo: ["all", "cows", "eat", "grass"] },
  );
  deepEqual(
    apply({ baz: "qux", foo: ["a", 2, "c"] }, [
      { op: "test", path: "/baz", value: "qux" },
      { op: "test", path: "/foo/1", value: 2 },
    ]),
    { baz: "qux", foo: ["a", 2, "c"] },
  );
  deepEqual(apply({ foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }]), {
    foo: ["bar", ["abc", "def"]],
  });
  deepEqual(apply({ a: { b: 1 } }, [{ op: "copy", from: "/a", path: "/c" }]), {
    a: { b: 1 },
    c: { b: 1 },
  });
  // The whole document: add and replace of "" replace it.
  deepEqual(apply({ a: 1 }, [{ op: "replace", path: "", value: [1] }]), [1]);
  deepEqual(apply({ "/": 1, "~": 2 }, [{ op: "remove", path: "/~1" }]), { "~": 2 });
  deepEqual(apply({ "a/b~c": 1 }, [{ op: "test", path: "/a~1b~0c", value: 1 }]), { "a/b~c": 1 });
});

Deno.test("pointers: ~0 and ~1 escape, round trip, malformed ones refused", () => {
  deepEqual(parsePointer("/a~1b/~0/0/"), ["a/b", "~", "0", ""]);
  equal(formatPointer(["a/b", "~", 0, ""]), "/a~1b/~0/0/");
  deepEqual(parsePointer(""), []);
  throws(() => parsePointer("a"), /starts with "\/"/);
  throws(() => parsePointer("/a~2"), /"~" must be followed by 0 or 1/);
});

Deno.test("a failing operation names its index, name and pointer, quotes no value, and changes nothing", () => {
  const doc = { machine: { hostname: "a", ca: { key: "SECRETkey" }, list: [1, 2] } };
  let e = refusal(doc, [
    { op: "replace", path: "/machine/hostname", value: "b" },
    { op: "replace", path: "/machine/nope", value: "x" },
  ]);
  equal(e.kind, "missing");
  deepEqual([e.at.op, e.at.opName, e.at.pointer], [1, "replace", "/machine/nope"]);
  equal(
    e.message,
    'operation 1 (replace), at "/machine/nope": no value there (or its parent does not exist)',
  );
  e = refusal(doc, [{ op: "test", path: "/machine/ca/key", value: "guess" }]);
  equal(e.kind, "test");
  equal(e.message.includes("SECRET") || e.message.includes("guess"), false);
  e = refusal(doc, [{ op: "add", path: "/machine/list/3", value: 0 }]);
  deepEqual([e.kind, e.at.op], ["missing", 0]);
  e = refusal(doc, [{ op: "remove", path: "/machine/list/-" }]);
  equal(e.kind, "pointer");
  e = refusal(doc, [{ op: "replace", path: "/machine/list/01", value: 0 }]);
  equal(e.kind, "pointer");
  e = refusal(doc, [{ op: "add", path: "/machine/hostname/x", value: 0 }]);
  equal(e.kind, "missing");
  e = refusal(doc, [{ op: "move", from: "/machine", path: "/machine/x" }]);
  match(e.message, /own children/);
  e = refusal(doc, [{ op: "remove", path: "" }]);
  equal(e.kind, "pointer");
  e = refusal(doc, [{ op: "copy", from: "/nothing", path: "/x" }]);
  deepEqual([e.kind, e.at.pointer], ["missing", "/nothing"]);
});

Deno.test("copies that double the document are refused at the value limit", () => {
  let ops: PatchOperation[] = [{ op: "add", path: "/a", value: [1, 2, 3, 4, 5, 6, 7, 8] }];
  for (let i = 0; i < 20; i++) ops.push({ op: "copy", from: "/a", path: "/a/-" });
  const e = refusal({}, ops);
  equal(e.kind, "limit");
  match(e.message, /more than 200000 values/);
  ops = ops.slice(0, 10);
  equal(Array.isArray((apply({}, ops) as { a: unknown[] }).a), true);
});

function match(s: string, re: RegExp) {
  if (!re.test(s)) throw new Error(`${JSON.stringify(s)} does not match ${re}`);
}
