/**
 * The native identity backend in a fresh UTS namespace (`unshare --uts`):
 * the inner run refuses to set anything unless its UTS namespace differs
 * from the host's. Needs root; ignored otherwise.
 */
import assert from "node:assert/strict";
import { assertNotHostNamespace, insideTestNamespace, rerunInNamespace } from "../testing.ts";
import { NativeIdentityBackend } from "./backend_native.ts";
import { identityBackendConformance } from "./backend_conformance.ts";

const isRoot = Deno.uid() === 0;

if (!insideTestNamespace("uts")) {
  if (!isRoot) console.log("skipping native identity tests: sethostname needs root");
  Deno.test({
    name: "NativeIdentityBackend conformance in a private UTS namespace (needs root)",
    ignore: !isRoot,
    fn: async () => {
      const before = Deno.hostname();
      const r = await rerunInNamespace("uts", ["--uts"], import.meta.url);
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /\| 2 passed \| 0 failed \(/, "all ran: none failed or ignored");
      assert.equal(Deno.hostname(), before, "the host's hostname changed");
    },
  });
} else {
  assertNotHostNamespace("uts");
  identityBackendConformance("NativeIdentityBackend", () => new NativeIdentityBackend());
}
