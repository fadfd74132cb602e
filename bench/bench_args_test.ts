import assert from "node:assert/strict";
import { parseBenchArgs } from "./bench_args.ts";

Deno.test("bench: --help, unknown flags and suites are answered before any suite runs", () => {
  assert.equal(parseBenchArgs(["--help"]).kind, "help");
  assert.equal(parseBenchArgs(["attack", "-h"]).kind, "help");
  const bogus = parseBenchArgs(["--bogus"]);
  assert.ok(bogus.kind === "error" && /--bogus/.test(bogus.message));
  const typo = parseBenchArgs(["runtime", "confg"]);
  assert.ok(typo.kind === "error" && /unknown benchmark suite "confg"/.test(typo.message));
  assert.equal(parseBenchArgs(["attack", "--bogus"]).kind, "error");
  const all = parseBenchArgs([]);
  assert.ok(all.kind === "suites");
  assert.deepEqual(all.wanted, ["api", "config", "watch", "observe", "runtime"]);
  const soak = parseBenchArgs(["--soak", "--duration=1m"]);
  assert.ok(soak.kind === "suites" && soak.wanted.join() === "soak");
  assert.deepEqual(parseBenchArgs(["attack", "--scenario=soak"]), {
    kind: "attack",
    args: ["--scenario=soak"],
  });
});

Deno.test("bench/main.ts --help exits 0, --bogus exits 2, without running a suite", async () => {
  const main = new URL("./main.ts", import.meta.url).pathname;
  const run = (arg: string) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, arg],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
  const help = await run("--help");
  assert.equal(help.code, 0);
  assert.match(new TextDecoder().decode(help.stdout), /^usage: deno task bench/);
  const bogus = await run("--bogus");
  assert.equal(bogus.code, 2);
  assert.equal(bogus.stdout.length, 0, "no figure printed");
  assert.match(new TextDecoder().decode(bogus.stderr), /error: unknown or invalid flag "--bogus"/);
});
