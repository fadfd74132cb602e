import assert from "node:assert/strict";
import { NODE_EXTRAS } from "./node_extras.ts";
import { DEFAULT_MODULES } from "./versions.ts";

Deno.test("the node image carries cryptsetup where NativeCryptBackend's PATH finds it", () => {
  const c = NODE_EXTRAS.find((x) => x.dest === "/usr/sbin/cryptsetup");
  assert.deepEqual(c, {
    source: "/usr/sbin/cryptsetup",
    dest: "/usr/sbin/cryptsetup",
    package: "cryptsetup-bin",
  });
  const dests = NODE_EXTRAS.map((x) => x.dest);
  assert.equal(new Set(dests).size, dests.length, "one source per destination");
});

Deno.test("the node's modules include dm-crypt, XTS and the crypto API socket", () => {
  for (const m of ["dm_crypt", "xts", "algif_skcipher"]) assert.ok(DEFAULT_MODULES.includes(m), m);
});
