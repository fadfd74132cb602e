import assert from "node:assert/strict";
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "./v8_flags.ts";
import { kernelCmdline } from "../imager/mod.ts";

// The flags chosen by measurement (docs/decisions.md, "V8 flags for machined
// and apid", "V8 lite mode for machined"): changing them means measuring again
// (bench/heap_bench.ts, bench/boot_pair.ts --memory page-out, bench/api_bench.ts).
const CHOSEN = ["--max-semi-space-size=2", "--lite-mode", "--no-enable-lazy-source-positions"];

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

Deno.test("under machined's V8 flags WebAssembly does not exist (lite mode is jitless)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--v8-flags=${MACHINED_V8_FLAGS.join(",")}`, "console.log(typeof WebAssembly)"],
    stdout: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "undefined");
});
