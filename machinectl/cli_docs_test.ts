import assert from "node:assert/strict";
import { COMMANDS } from "./cli.ts";
import { CLI_DOCS_URL, generateCliDocs, renderCliDocs } from "./cli_docs.ts";

Deno.test("docs/cli.md is up to date with the command declarations (run `deno task docs:cli`)", async () => {
  const expected = await generateCliDocs();
  const actual = await Deno.readTextFile(CLI_DOCS_URL);
  assert.ok(actual === expected, "docs/cli.md is stale: run `deno task docs:cli`");
});

Deno.test("the reference has every command, its usage and every flag it declares", () => {
  const text = renderCliDocs();
  for (const c of COMMANDS) {
    assert.ok(text.includes(`## \`${c.name}\``), c.name);
    assert.ok(text.includes(`machinectl ${c.usage}`), c.name);
    for (const f of Object.keys(c.flags)) assert.ok(text.includes(`--${f}`), `${c.name} ${f}`);
  }
});
