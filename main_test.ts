import assert from "node:assert/strict";
import { parseMain } from "./main.ts";

Deno.test("main.ts: --help and dev --help ask for the usage; bad flags are usage errors", () => {
  assert.deepEqual(parseMain(["--help"]), { kind: "help" });
  assert.deepEqual(parseMain(["dev", "--help"]), { kind: "help" });
  assert.deepEqual(parseMain(["node", "whatever=the kernel passes"]), { kind: "node" });
  assert.deepEqual(parseMain(["dev"]), {
    kind: "dev",
    state: ".state/dev",
    listen: "127.0.0.1:50000",
    hostname: "machined-dev",
  });
  const bogus = parseMain(["dev", "--bogus"]);
  assert.ok(bogus.kind === "error" && /--bogus/.test(bogus.message));
  assert.equal(parseMain(["--bogus"]).kind, "error");
  assert.equal(parseMain([]).kind, "error");
});

Deno.test("main.ts --help exits 0 and dev --bogus exits 2 without starting dev mode", async () => {
  const main = new URL("./main.ts", import.meta.url).pathname;
  const cwd = await Deno.makeTempDir();
  const run = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, ...args],
      cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
  const help = await run("--help");
  assert.equal(help.code, 0);
  assert.match(new TextDecoder().decode(help.stdout), /^usage: main\.ts dev/);
  for (const args of [["--bogus"], ["dev", "--bogus"]]) {
    const r = await run(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(new TextDecoder().decode(r.stderr), /^error: /);
  }
  assert.deepEqual(await Array.fromAsync(Deno.readDir(cwd)), [], "no .state/dev made");
  await Deno.remove(cwd);
});
