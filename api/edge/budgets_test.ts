/**
 * The one budget table (api/edge/budgets.ts) against its three readers:
 * machined's flags to machined-edge, the binary's own defaults
 * (`--print-defaults`), and docs/api.md's generated block.
 */
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { budget, budgetArgs, EDGE_BUDGETS } from "./budgets.ts";
import { API_DOCS_URL, generateApiDocs, spliceBudgetTable } from "./budgets_docs.ts";
import { edgeBinaryPath } from "./edge_process_spec.ts";
import { edgeBinaryBuilt } from "./testing.ts";

Deno.test("docs/api.md renders the budget table (run `deno task docs:budgets`)", async () => {
  const expected = await generateApiDocs();
  const actual = await Deno.readTextFile(API_DOCS_URL);
  ok(actual === expected, "docs/api.md is stale: run `deno task docs:budgets`");
  ok(actual.includes("| TLS handshakes in progress"), "the table is in the doc");
});

Deno.test("spliceBudgetTable: refuses a doc without its markers", () => {
  throws(() => spliceBudgetTable("## Limits\n"), /lacks the markers/);
});

Deno.test({
  name: "machined-edge --print-defaults equals the budget table (needs the edge binary)",
  ignore: !edgeBinaryBuilt(),
}, async () => {
  const out = await new Deno.Command(edgeBinaryPath(), {
    args: ["--print-defaults"],
    stdout: "piped",
  }).output();
  equal(out.code, 0);
  const binary: Record<string, number> = JSON.parse(new TextDecoder().decode(out.stdout));
  const table = Object.fromEntries(EDGE_BUDGETS.map((b) => [b.key, b.number]));
  deepEqual(binary, table);
});

Deno.test("budgetArgs: every edge-only budget from the table, overridden where set", () => {
  const args = budgetArgs({ maxStreams: 7 });
  ok(args.includes("--max-streams=7"), args.join(" "));
  ok(args.includes(`--max-streams-per-client=${budget("max_streams_per_client")}`));
  ok(args.includes("--max-handshakes=128"), args.join(" "));
  // The config's own (streams per connection, message size) come from apidArgs, not twice.
  ok(!args.some((a) => a.startsWith("--max-concurrent-streams")), args.join(" "));
  equal(args.length, EDGE_BUDGETS.filter((b) => b.limit).length);
  throws(() => budget("max_streamz"), /no edge budget/);
});
