import assert from "node:assert/strict";
import { COMMANDS, runMachinectl } from "./cli.ts";
import { allFlags, CONNECTION_FLAGS, defineCommand } from "./command.ts";
import { FlagError, parseFlags } from "./flag_parse.ts";
import { declareFlags, type FlagDecls, flagSynopsis, isRequired } from "./flags.ts";
import { bufferIo } from "./io.ts";

/** Compiles only when A and B are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

Deno.test("a handler's flags are typed by the declaration; an undeclared name does not compile", () => {
  const command = defineCommand({
    name: "typed",
    summary: "",
    connects: true,
    flags: {
      namespace: { kind: "string", help: "" },
      watch: { kind: "boolean", short: "w", help: "" },
      depth: { kind: "number", default: 0, help: "" },
      kind: { kind: "strings", help: "" },
      output: { kind: "enum", values: ["table", "json"], default: "table", help: "" },
      mode: { kind: "enum", values: ["a", "b"], help: "" },
    },
    run({ flags }) {
      const checks: true[] = [
        true as Same<typeof flags.namespace, string | undefined>,
        true as Same<typeof flags.watch, boolean>,
        true as Same<typeof flags.depth, number>,
        true as Same<typeof flags.kind, string[] | undefined>,
        true as Same<typeof flags.output, "table" | "json">,
        true as Same<typeof flags.mode, "a" | "b" | undefined>,
        // The global flags come with `connects: true`.
        true as Same<typeof flags.nodes, string[] | undefined>,
        true as Same<typeof flags.insecure, boolean>,
      ];
      // @ts-expect-error: a misspelt flag is a compile error, not undefined at run time.
      void flags.namepsace;
      return Promise.resolve(checks.length);
    },
  });
  const offline = defineCommand({
    name: "offline",
    summary: "",
    connects: false,
    flags: {},
    run({ flags }) {
      // @ts-expect-error: a command that does not connect has no global connection flags.
      void flags.nodes;
      return Promise.resolve(0);
    },
  });
  assert.equal(
    command.usage,
    "typed [--namespace NAMESPACE] [-w] [--depth DEPTH] [--kind KIND...] [--output table|json] [--mode a|b]",
  );
  assert.equal(offline.usage, "offline");
});

Deno.test("the parser fills defaults, converts numbers, checks enums, takes --flag=false", () => {
  const decls = declareFlags({
    wait: { kind: "boolean", default: true, help: "" },
    yes: { kind: "boolean", short: "y", help: "" },
    depth: { kind: "number", short: "d", default: 0, help: "" },
    kind: { kind: "strings", help: "" },
    output: {
      kind: "enum",
      short: "o",
      values: ["table", "json"],
      noun: "output format",
      help: "",
    },
  });
  let r = parseFlags(["x", "-d", "2", "--kind", "a", "--kind=b", "--wait=false"], decls);
  assert.deepEqual(r.flags, {
    wait: false,
    yes: false,
    depth: 2,
    kind: ["a", "b"],
    output: undefined,
  });
  assert.deepEqual(r.args, ["x"]);
  r = parseFlags(["-y", "-o", "json"], decls);
  assert.deepEqual(r.flags, { wait: true, yes: true, depth: 0, kind: undefined, output: "json" });
  assert.throws(() => parseFlags(["-d", "two"], decls), /--depth wants a number, got "two"/);
  assert.throws(
    () => parseFlags(["-o", "xml"], decls),
    (e: unknown) =>
      e instanceof FlagError && /unknown output format "xml" \(use table or json\)/.test(e.message),
  );
  assert.throws(
    () => parseFlags(["--deth", "1"], decls),
    /unknown flag "--deth"; did you mean "--depth"/,
  );
  assert.throws(() => parseFlags(["--kind"], decls), /flag "--kind" needs a value/);
});

Deno.test("every command's usage line and --help list every flag it declares", async () => {
  for (const c of COMMANDS) {
    for (const [n, f] of Object.entries(c.flags)) {
      const shown = isRequired(f) ? ` ${flagSynopsis(n, f)}` : `[${flagSynopsis(n, f)}]`;
      assert.ok(c.usage.includes(shown), `${c.name}: ${c.usage} lacks --${n}`);
    }
    const io = bufferIo();
    assert.equal(await runMachinectl([...c.name.split(" "), "--help"], io), 0);
    const help = io.stdout.join("\n");
    for (const [n, f] of Object.entries(allFlags(c))) {
      assert.ok(help.includes(`--${n}`), `${c.name} --help lacks --${n}`);
      assert.ok(help.includes(f.help), `${c.name} --help lacks the help of --${n}`);
    }
  }
});

Deno.test("no command redeclares a global flag or its short form (get's -n stays --nodes)", () => {
  const globalShorts = new Set(Object.values(CONNECTION_FLAGS as FlagDecls).map((f) => f.short));
  for (const c of COMMANDS.filter((c) => c.connects)) {
    for (const [n, f] of Object.entries(c.flags)) {
      assert.ok(!(n in CONNECTION_FLAGS), `${c.name} --${n} shadows the global flag`);
      assert.ok(!f.short || !globalShorts.has(f.short), `${c.name} -${f.short} is a global one`);
    }
  }
});

Deno.test("a flag declared on another command is refused: exit 2, its name, the usage", async () => {
  const everyFlag = new Set(COMMANDS.flatMap((c) => Object.keys(c.flags)));
  for (const c of COMMANDS) {
    const mine = allFlags(c);
    for (const f of everyFlag) {
      if (f in mine) continue;
      const io = bufferIo();
      const code = await runMachinectl([...c.name.split(" "), `--${f}=x`], io);
      assert.equal(code, 2, `${c.name} --${f}`);
      assert.deepEqual(io.stdout, []);
      assert.ok(io.stderr[0].startsWith(`${c.name}: unknown flag "--${f}"`), io.stderr[0]);
      assert.ok(io.stderr.join("\n").includes(`usage: machinectl ${c.usage}`), c.name);
    }
  }
  const io = bufferIo();
  assert.equal(await runMachinectl(["version", "--namespace", "runtime"], io), 2);
  assert.match(io.stderr[0], /^version: unknown flag "--namespace"/);
});

Deno.test("--flag=false reaches fan-out too: upgrade -n a,b --rolling --wait=false is refused", async () => {
  const io = bufferIo();
  const argv = ["upgrade", "-f", "b.bundle", "-n", "a,b", "--rolling", "--wait=false"];
  assert.equal(await runMachinectl(argv, io), 2);
  assert.match(io.stderr[0], /upgrade --rolling waits for each node/);
});

Deno.test("a required flag: no undefined in its type, no brackets in usage, refused when absent", async () => {
  const command = defineCommand({
    name: "needs",
    summary: "",
    connects: false,
    flags: {
      out: { kind: "string", value: "FILE", required: true, help: "where" },
      endpoint: { kind: "strings", required: true, help: "" },
      depth: { kind: "number", help: "" },
    },
    run({ flags }) {
      const checks: true[] = [
        true as Same<typeof flags.out, string>,
        true as Same<typeof flags.endpoint, string[]>,
        true as Same<typeof flags.depth, number | undefined>,
      ];
      return Promise.resolve(checks.length);
    },
  });
  assert.equal(command.usage, "needs --out FILE --endpoint ENDPOINT... [--depth DEPTH]");
  assert.throws(
    () => parseFlags(["--endpoint", "a"], command.flags),
    (e) => e instanceof FlagError && e.message === "--out FILE is required",
  );
  assert.throws(
    () => parseFlags(["--out", "x"], command.flags),
    /--endpoint ENDPOINT\.\.\. is required/,
  );
  assert.equal(parseFlags(["--help"], command.flags).help, true, "--help is answered without them");
  const io = bufferIo();
  const code = await runMachinectl(["gen", "client", "--name", "a", "--endpoint", "n:50000"], io);
  assert.equal(code, 2);
  assert.match(io.stderr.join("\n"), /gen client: --out FILE is required/);
  assert.match(io.stderr.join("\n"), /usage: machinectl gen client .*--out FILE/);
});
