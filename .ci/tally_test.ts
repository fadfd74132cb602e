/**
 * .ci/run's log reading (.ci/tally.sh): the counts it prints as
 * "N passed, N failed, N skipped", the ignored tests it checks against
 * .ci/expected-skips, and the deno-free PATH it runs the README's command with.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const TALLY = new URL("./tally.sh", import.meta.url).pathname;

/** Run `fn args...` from tally.sh in bash; returns stdout (asserts exit `code`). */
async function call(fn: string, args: string[], code = 0): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", `source "$0" && ${fn} "$@"`, TALLY, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  assert.equal(out.code, code, td.decode(out.stderr));
  return td.decode(out.stdout);
}

async function withFiles<T>(
  files: Record<string, string>,
  fn: (path: (name: string) => string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "ci-tally-" });
  try {
    for (const [name, text] of Object.entries(files)) {
      await Deno.writeTextFile(join(dir, name), text);
    }
    return await fn((name) => join(dir, name));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const SERIAL_LOG = `running 3 tests from ./a_test.ts
needs a tool (needs sgdisk) ... \x1b[33mignored\x1b[0m (0ms)
pass ... ok (1ms)
steps ...
------- output -------
ok | 4 passed | 0 failed (4s)
----- output end -----
  mkfs.xfs x (needs mkfs.xfs) ... ignored (0ms)
  ok step ... ok (0ms)
steps ... ok (1ms)
NativeKmodBackend: load a harmless module with its dependencies (ignored: the kernel has no module support; the QEMU tier loads modules) ... ignored (0ms)

\x1b[32mok\x1b[0m | 2 passed (1 step) | 0 failed | 2 ignored (1 step) (63ms)
`;

const PARALLEL_LOG = `------- output -------
ok | 4 passed | 0 failed (4s)
inner (needs z) ... ignored (0ms)
./b_test.ts => reruns itself ...----- output end -----
./b_test.ts => reruns itself ... ok (5s)
./b_test.ts => a (needs root) ... ignored (0ms)
./b_test.ts => s ... st (needs y) ... ignored (0ms)
./b_test.ts => fine ... ok (1ms)

FAILED | 7 passed | 1 failed | 1 ignored (1 step) (2s)
test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
`;

Deno.test("ci tally: summaries add up (not those a test printed); ignored steps are skipped", async () => {
  await withFiles({ serial: SERIAL_LOG, parallel: PARALLEL_LOG }, async (p) => {
    assert.equal(await call("log_counts", [p("serial")]), "2 0 3\n");
    assert.equal(await call("log_counts", [p("parallel")]), "12 1 3\n");
  });
});

Deno.test("ci tally: ignored tests and steps are named, in serial and --parallel logs", async () => {
  await withFiles({ serial: SERIAL_LOG, parallel: PARALLEL_LOG }, async (p) => {
    assert.deepEqual((await call("ignored_tests", [p("serial")])).trimEnd().split("\n"), [
      "needs a tool (needs sgdisk)",
      "mkfs.xfs x (needs mkfs.xfs)",
      "NativeKmodBackend: load a harmless module with its dependencies " +
      "(ignored: the kernel has no module support; the QEMU tier loads modules)",
    ]);
    assert.deepEqual((await call("ignored_tests", [p("parallel")])).trimEnd().split("\n"), [
      "./b_test.ts => a (needs root)",
      "./b_test.ts => s ... st (needs y)",
    ]);
  });
});

Deno.test("ci tally: only skips the allow-list names are expected; a pattern needs a reason", async () => {
  const allow =
    "# comment\n\nload a harmless module .*no module support # no CONFIG_MODULES here\n";
  await withFiles({ log: SERIAL_LOG, allow, bad: "needs a tool\n" }, async (p) => {
    assert.deepEqual(
      (await call("unexpected_skips", [p("log"), p("allow")])).trimEnd(),
      [
        "needs a tool (needs sgdisk)",
        "mkfs.xfs x (needs mkfs.xfs)",
      ].join("\n"),
    );
    await call("unexpected_skips", [p("log"), p("bad")], 2);
  });
});

Deno.test("ci tally: the repository's expected skips are exactly the two this build host needs", async () => {
  const allow = new URL("./expected-skips", import.meta.url).pathname;
  const log = [
    "NativeKmodBackend: load a harmless module with its dependencies " +
    "(ignored: the kernel has no module support; the QEMU tier loads modules) ... ignored (0ms)",
    "NativeClockBackend: step, slew and status change the clock and state " +
    "(sets the clock: never on the build host) ... ignored (0ms)",
    "NativeKmodBackend: load a harmless module with its dependencies " +
    "(ignored: no module tree for 6.1.0) ... ignored (0ms)",
    "gpt: sgdisk and sfdisk accept what we write (needs sgdisk) ... ignored (0ms)",
  ].join("\n");
  await withFiles({ log }, async (p) => {
    assert.deepEqual((await call("unexpected_skips", [p("log"), allow])).trimEnd().split("\n"), [
      "NativeKmodBackend: load a harmless module with its dependencies " +
      "(ignored: no module tree for 6.1.0)",
      "gpt: sgdisk and sfdisk accept what we write (needs sgdisk)",
    ]);
  });
});

Deno.test("ci tally: the README's command runs with no directory holding deno on PATH", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ci-path-" });
  try {
    await Deno.mkdir(join(dir, "with"));
    await Deno.mkdir(join(dir, "without"));
    await Deno.writeTextFile(join(dir, "with", "deno"), "#!/bin/sh\n", { mode: 0o755 });
    const path = [join(dir, "with"), "/usr/bin", join(dir, "without"), "", "/bin"].join(":");
    assert.equal(
      await call("path_without_deno", [path]),
      ["/usr/bin", join(dir, "without"), "/bin"].join(":"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
