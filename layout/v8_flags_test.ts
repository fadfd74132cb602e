import assert from "node:assert/strict";
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "./v8_flags.ts";
import { kernelCmdline } from "../imager/mod.ts";

// The flags chosen by measurement (docs/decisions.md, "V8 flags for machined
// and apid"): changing them means measuring again (bench/heap_bench.ts).
const CHOSEN = ["--max-semi-space-size=2"];

Deno.test("machined runs with the measured V8 flags", () => {
  assert.deepEqual(MACHINED_V8_FLAGS, CHOSEN);
});

Deno.test("v8FlagsArgs joins flags into one --v8-flags word, and gives none for none", () => {
  assert.deepEqual(v8FlagsArgs(["--a", "--b=1"]), ["--v8-flags=--a,--b=1"]);
  assert.deepEqual(v8FlagsArgs([]), []);
});

Deno.test("PID 1's command line passes machined's V8 flags to deno, before the program", () => {
  const argv = kernelCmdline({ program: "js" }).split(" -- ")[1].split(" ");
  assert.deepEqual(argv, [
    "/usr/bin/deno",
    "run",
    "-A",
    "--no-config",
    "--no-lock",
    ...v8FlagsArgs(MACHINED_V8_FLAGS),
    "/machined/main.js",
  ]);
});
