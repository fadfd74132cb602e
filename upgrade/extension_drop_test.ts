import assert from "node:assert/strict";
import { extensionDecision } from "./extension_drop.ts";

Deno.test("a bundle that keeps every running extension is kept, whatever their versions", () => {
  const v = extensionDecision({
    running: ["hello", "nic-tools"],
    bundle: [{ name: "nic-tools" }, { name: "hello" }, { name: "new" }],
  });
  assert.deepEqual(v, { kind: "kept" });
  assert.deepEqual(extensionDecision({ running: [], bundle: undefined }), { kind: "kept" });
});

Deno.test("a bundle that drops a running extension is refused, naming it", () => {
  const v = extensionDecision({ running: ["hello", "zfs"], bundle: [{ name: "zfs" }] });
  assert.equal(v.kind, "refused");
  if (v.kind !== "refused") return;
  assert.equal(v.reason, "extension-dropped");
  assert.deepEqual(v.dropped, ["hello"]);
  assert.match(v.message, /drops system extension "hello" that the running node has/);
  assert.match(v.message, /--force/);
  const none = extensionDecision({ running: ["b", "a"], bundle: undefined });
  assert.equal(none.kind, "refused");
  assert.deepEqual(none.kind === "refused" && none.dropped, ["a", "b"]);
});

Deno.test("--force installs a bundle that drops an extension, and says which", () => {
  const v = extensionDecision({ running: ["hello"], bundle: [], force: true });
  assert.equal(v.kind, "forced");
  assert.deepEqual(v.kind === "forced" && v.dropped, ["hello"]);
});
