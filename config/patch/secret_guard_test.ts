/** The secrets a patch cannot read out or overwrite with the placeholder (secret_guard.ts). */
import { deepEqual, equal, match } from "node:assert/strict";
import { applyPatches } from "./apply_patches.ts";
import type { PatchOperation } from "./json_patch.ts";
import { PatchError } from "./patch_error.ts";
import type { JsonValue } from "./json_value.ts";

const KEY = "-----BEGIN EC PRIVATE KEY-----\nSECRETkeyMATERIAL\n-----END EC PRIVATE KEY-----\n";
const doc = () => ({
  version: "v1alpha1",
  machine: { hostname: "a", ca: { crt: "CRT", key: KEY }, services: [{ id: "w" }, { id: "x" }] },
});

function refusal(ops: PatchOperation[] | { merge: JsonValue }): PatchError {
  const d = doc();
  try {
    applyPatches(d, ["merge" in ops ? { type: "merge", value: ops.merge } : { type: "json", ops }]);
  } catch (e) {
    if (!(e instanceof PatchError)) throw e;
    deepEqual(d, doc());
    if (e.message.includes("SECRETkey")) throw new Error("the message quotes the secret");
    return e;
  }
  throw new Error("expected a refusal");
}

Deno.test("a test at or above a secret is refused (it would answer guesses)", () => {
  for (const path of ["/machine/ca/key", "/machine/ca", "/machine", ""]) {
    const e = refusal([{ op: "test", path, value: KEY }]);
    deepEqual([e.kind, e.at.op, e.at.pointer], ["secret", 0, path]);
  }
  // Elsewhere a test is fine.
  applyPatches(doc(), [{
    type: "json",
    ops: [{ op: "test", path: "/machine/hostname", value: "a" }],
  }]);
});

Deno.test("copy or move of a secret to where readers see it is refused; within a list it is not", () => {
  let e = refusal([{ op: "copy", from: "/machine/ca/key", path: "/machine/hostname" }]);
  deepEqual([e.kind, e.at.pointer], ["secret", "/machine/ca/key"]);
  e = refusal([{ op: "move", from: "/machine/ca", path: "/machine/ca2" }]);
  equal(e.kind, "secret");
  const moved = applyPatches(doc(), [{
    type: "json",
    ops: [{ op: "move", from: "/machine/services/0", path: "/machine/services/1" }],
  }]) as ReturnType<typeof doc>;
  deepEqual(moved.machine.services, [{ id: "x" }, { id: "w" }]);
});

Deno.test("the placeholder written where the secret goes is refused, by either kind of patch", () => {
  let e = refusal([{ op: "replace", path: "/machine/ca/key", value: "(redacted)" }]);
  deepEqual([e.kind, e.at.patch, e.at.pointer], ["secret", undefined, "/machine/ca/key"]);
  match(e.message, /would write the placeholder "\(redacted\)" as the secret/);
  e = refusal({ merge: { machine: { ca: { key: "(redacted)" } } } });
  equal(e.kind, "secret");
  // A new key is an admin's to give; the old one is gone from the result, not quoted.
  const out = applyPatches(doc(), [{ type: "merge", value: { machine: { ca: { key: "NEW" } } } }]);
  equal((out as ReturnType<typeof doc>).machine.ca.key, "NEW");
});
