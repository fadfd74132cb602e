import assert from "node:assert/strict";
import { MACHINED_V8_FLAGS } from "../layout/mod.ts";
import {
  type CacheEntry,
  identicalInAll,
  STABLE_EXT_SURVEY,
  stableExtFor,
  type StableExtSurvey,
} from "./code_cache_ext.ts";
import { warmDenoDir } from "./code_cache.ts";
import { surveyExtEntries } from "./code_cache_survey.ts";
import { bundleProgram } from "./program.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

Deno.test("identicalInAll keeps Deno's own modules whose entry is the same in every run", () => {
  const run = (http2: number): CacheEntry[] => [
    { specifier: "ext:deno_node/path.ts", data: bytes(1, 2, 3) },
    { specifier: "ext:deno_node/http2.ts", data: bytes(9, http2) },
    { specifier: "node:fs", data: bytes(4) },
    { specifier: "file:///machined/main.js", data: bytes(5) },
  ];
  const third = run(7).filter((r) => r.specifier !== "node:fs");
  assert.deepEqual(identicalInAll([run(7), run(7)]), [
    "ext:deno_node/http2.ts",
    "ext:deno_node/path.ts",
    "node:fs",
  ], "sorted; the program's own file: entry is not Deno's");
  assert.deepEqual(identicalInAll([run(7), run(8), run(7)]), ["ext:deno_node/path.ts", "node:fs"]);
  assert.deepEqual(identicalInAll([run(7), third]), [
    "ext:deno_node/http2.ts",
    "ext:deno_node/path.ts",
  ]);
  assert.deepEqual(identicalInAll([]), []);
});

Deno.test("stableExtFor: the survey holds only for its architecture and V8 flags", () => {
  const survey: StableExtSurvey = {
    deno: "2.9.3",
    arch: "x86_64",
    v8Flags: ["--lite-mode"],
    runs: 8,
    specifiers: ["ext:a", "node:b"],
  };
  const hit = stableExtFor("x86_64", ["--lite-mode"], survey);
  assert.equal(hit?.deno, "2.9.3");
  assert.deepEqual([...hit!.specifiers], ["ext:a", "node:b"]);
  assert.equal(stableExtFor("aarch64", ["--lite-mode"], survey), undefined);
  assert.equal(stableExtFor("x86_64", [], survey), undefined);
  assert.equal(stableExtFor("x86_64", ["--lite-mode", "--jitless"], survey), undefined);
});

Deno.test("the committed survey is for the pinned Deno and machined's V8 flags (else: deno task cache:survey)", () => {
  assert.equal(STABLE_EXT_SURVEY.deno, Deno.version.deno);
  assert.deepEqual(STABLE_EXT_SURVEY.v8Flags, [...MACHINED_V8_FLAGS]);
  assert.equal(STABLE_EXT_SURVEY.arch, "x86_64");
  assert.ok(STABLE_EXT_SURVEY.runs >= 8);
  assert.ok(STABLE_EXT_SURVEY.specifiers.length > 50, "the node: layer's modules");
  assert.ok(
    STABLE_EXT_SURVEY.specifiers.every((s) => s.startsWith("ext:") || s.startsWith("node:")),
  );
  assert.deepEqual([...STABLE_EXT_SURVEY.specifiers].sort(), STABLE_EXT_SURVEY.specifiers);
});

Deno.test({
  name: "machined's bundle today: every surveyed entry is the same in 6 warms, and a warm ships " +
    "them (x86_64 only: the survey is x86_64's, an arm64 image ships none)",
  ignore: Deno.build.arch !== "x86_64",
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "imager-survey-" });
  try {
    const program = await bundleProgram(
      new URL("../main.ts", import.meta.url).pathname,
      `${dir}/main.js`,
    );
    const survey = await surveyExtEntries(program, 6);
    const varied = STABLE_EXT_SURVEY.specifiers.filter((s) => !survey.specifiers.includes(s));
    assert.deepEqual(varied, [], "listed entries that now vary: run `deno task cache:survey`");
    const r = await warmDenoDir({
      deno: Deno.execPath(),
      program,
      nodePath: "/machined/main.js",
      denoDir: `${dir}/cache`,
      v8Flags: MACHINED_V8_FLAGS,
      stableExt: stableExtFor(Deno.build.arch, MACHINED_V8_FLAGS),
    });
    assert.equal(r.programCached, true);
    assert.deepEqual(r.unstableExt, []);
    assert.equal(
      r.codeCacheEntries,
      STABLE_EXT_SURVEY.specifiers.length + 1,
      "the list and the program",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
