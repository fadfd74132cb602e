/**
 * Every imager entry point answers `--help` (usage on stdout, exit 0) and
 * refuses an unknown flag (exit 2) before it builds, boots or stops anything.
 */
import assert from "node:assert/strict";
import { parseCli } from "./cli_args.ts";
import { checkImageArgs, IMAGE_CLI } from "./image_cli.ts";
import { checkUpArgs, UP_CLI } from "./up_cli.ts";
import { checkDownArgs, DOWN_CLI } from "./down_cli.ts";

const ENTRIES = [
  { file: "image_cli.ts", spec: IMAGE_CLI, check: checkImageArgs },
  { file: "up_cli.ts", spec: UP_CLI, check: checkUpArgs },
  { file: "down_cli.ts", spec: DOWN_CLI, check: checkDownArgs },
];

Deno.test("parse: --help wins, unknown flags and bad values are usage errors", () => {
  for (const { file, spec, check } of ENTRIES) {
    assert.equal(parseCli(["--help"], spec, check).kind, "help", file);
    assert.equal(parseCli(["--bogus", "-h"], spec, check).kind, "help", file);
    const bogus = parseCli(["--bogus"], spec, check);
    assert.ok(bogus.kind === "error" && /Unknown option "--bogus"/.test(bogus.message), file);
    assert.equal(parseCli(["stray"], spec, check).kind, "error", file);
    assert.equal(parseCli([], spec, check).kind, "run", file);
  }
  const noKey = parseCli(["--bundle", "x.bundle"], IMAGE_CLI, checkImageArgs);
  assert.ok(noKey.kind === "error" && /--signing-key/.test(noKey.message));
  assert.equal(parseCli(["--compression", "gzip"], UP_CLI, checkUpArgs).kind, "error");
  assert.equal(parseCli(["--accel", "hvf"], UP_CLI, checkUpArgs).kind, "error");
  assert.equal(parseCli(["--timeout", "soon"], DOWN_CLI, checkDownArgs).kind, "error");
});

async function run(file: string, arg: string, cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(file, import.meta.url).pathname, arg],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return { code: out.code, out: td.decode(out.stdout), err: td.decode(out.stderr) };
}

for (const { file } of ENTRIES) {
  Deno.test(`${file} --help prints usage and exits 0; --bogus exits 2; nothing written`, async () => {
    const t0 = performance.now();
    const cwd = await Deno.makeTempDir();
    const help = await run(file, "--help", cwd);
    assert.equal(help.code, 0, help.err);
    assert.match(help.out, /^usage: deno task /);
    const bogus = await run(file, "--bogus", cwd);
    assert.equal(bogus.code, 2, bogus.err);
    assert.match(bogus.err, /error: Unknown option "--bogus"/);
    assert.equal(bogus.out, "");
    assert.ok(performance.now() - t0 < 60_000, "returns without building");
    assert.deepEqual(await Array.fromAsync(Deno.readDir(cwd)), [], "no build/ made");
    await Deno.remove(cwd);
  });
}
