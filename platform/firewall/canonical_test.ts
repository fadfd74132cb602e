import assert from "node:assert/strict";
import { canonicalListing } from "./canonical.ts";

const listing = (handle: number, port: number) =>
  JSON.stringify({
    nftables: [
      { metainfo: { version: "1.0.6", json_schema_version: 1 } },
      { table: { family: "inet", name: "machined", handle } },
      { chain: { family: "inet", table: "machined", name: "input", handle: handle + 1 } },
      {
        rule: {
          family: "inet",
          table: "machined",
          chain: "input",
          handle: handle + 2,
          expr: [{ match: { op: "==", right: port } }, { accept: null }],
        },
      },
    ],
  });

Deno.test("canonicalListing: handles and metainfo left out, contents kept", () => {
  assert.equal(canonicalListing(listing(1, 22)), canonicalListing(listing(40, 22)));
  assert.notEqual(canonicalListing(listing(1, 22)), canonicalListing(listing(1, 23)));
  assert.doesNotMatch(canonicalListing(listing(1, 22)), /handle|metainfo/);
});

Deno.test("canonicalListing: refuses what is not a listing", () => {
  assert.throws(() => canonicalListing("{"), SyntaxError);
  assert.throws(() => canonicalListing("{}"), TypeError);
});
