/**
 * `machinectl -n`: one table with a NODE column, per-node JSON objects, a
 * failing node reported without stopping the others and reflected in the exit
 * code, the context's `nodes:`, bounded parallelism and rolling runs. Two
 * names of one in-process node (127.0.0.1 and localhost) stand for two nodes;
 * port 1 on loopback is a node that is down.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../pki/mod.ts";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { defineCommand } from "./command.ts";
import { runMachinectl } from "./cli.ts";
import { mapBounded, mergeTables, runFanOut, splitNodes } from "./fanout.ts";
import { bufferIo, CliError } from "./io.ts";
import { fanOutOptions } from "./fanout_flags.ts";

async function clientConfig(f: ApiFixture, nodes?: string[]): Promise<string> {
  const path = join(f.pki.dir, `admin-${nodes ? "nodes" : "plain"}.yaml`);
  const cert = f.pki.clients["os:admin"];
  const ctx = contextFromPem([f.endpoint], {
    caPem: f.pki.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
  });
  await writeClientConfig(
    path,
    addContext(emptyClientConfig(), "test", nodes ? { ...ctx, nodes } : ctx),
  );
  return path;
}

async function run(config: string, ...argv: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(["--config", config, ...argv], io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("machinectl -n: NODE column, JSON per node, partial failure, context nodes", async () => {
  const f = await startApiFixture();
  try {
    const port = f.endpoint.split(":")[1];
    const a = `127.0.0.1:${port}`;
    const b = `localhost:${port}`;
    const down = "127.0.0.1:1";
    const config = await clientConfig(f);

    let r = await run(config, "get", "ms", "-n", `${a},${b}`);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.match(lines[0], /^NODE\s+NAMESPACE\s+TYPE\s+ID\s+VERSION\s+STAGE/);
    assert.match(lines[1], new RegExp(`^${a}\\s+runtime\\s+MachineStatus\\s+machine\\s`));
    assert.match(lines[2], new RegExp(`^${b}\\s+runtime\\s+MachineStatus\\s+machine\\s`));
    assert.equal(lines.length, 3);
    // One table: every row's columns start where the header's do.
    assert.equal(lines[1].indexOf("runtime"), lines[0].indexOf("NAMESPACE"));
    assert.equal(lines[2].indexOf("runtime"), lines[0].indexOf("NAMESPACE"));

    r = await run(config, "get", "ms", "-n", a, "-n", down);
    assert.equal(r.code, 1);
    assert.equal(r.out.split("\n").length, 2, r.out);
    assert.match(r.out, new RegExp(`^${a}\\s`, "m"));
    assert.match(r.err, /^127\.0\.0\.1:1: error: cannot reach the node at 127\.0\.0\.1:1/m);

    r = await run(config, "get", "ms", "-o", "json", "-n", `${down},${a}`);
    assert.equal(r.code, 1);
    const objects = r.out.split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(objects.map((o) => o.node), [down, a]);
    assert.match(objects[0].error, /cannot reach/);
    assert.equal(objects[1].results[0].metadata.type, "MachineStatus");

    r = await run(config, "version", "-n", `${a},${b}`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^NODE\s+OUTPUT$/m);
    assert.match(r.out, new RegExp(`^${a}\\s+Server \\(${a}\\):$`, "m"));
    assert.match(r.out, new RegExp(`^${b}\\s+Server \\(${b}\\):$`, "m"));

    r = await run(config, "reboot", "-n", `${a},${b}`);
    assert.equal(r.code, 0, r.err);
    assert.equal(f.actions.calls.filter((c) => c.action === "reboot").length, 2);

    // The context's nodes, when neither -n nor -e is given.
    const withNodes = await clientConfig(f, [a, down]);
    r = await run(withNodes, "get", "ms");
    assert.equal(r.code, 1);
    assert.match(r.out, new RegExp(`^${a}\\s`, "m"));
    assert.match(r.err, /^127\.0\.0\.1:1: error:/m);
    // -e still means one endpoint, without a NODE column.
    r = await run(withNodes, "get", "ms", "-e", a);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^NAMESPACE/);

    r = await run(config, "get", "ms", "-n", a, "-e", a);
    assert.equal(r.code, 2);
    assert.match(r.err, /use -n or -e, not both/);
    r = await run(config, "validate", "-n", a, "x.yaml");
    assert.equal(r.code, 2); // validate does not connect: -n is not its flag
  } finally {
    await f.close();
  }
});

Deno.test("fan-out: bounded parallelism, order kept", async () => {
  let running = 0;
  let peak = 0;
  const out = await mapBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
    peak = Math.max(peak, ++running);
    await new Promise((r) => setTimeout(r, 5 * (8 - n)));
    running--;
    return n * 10;
  });
  assert.deepEqual(out, [10, 20, 30, 40, 50, 60, 70]);
  assert.equal(peak, 3);
  assert.deepEqual(splitNodes(["a,b", " c ", "a", ""]), ["a", "b", "c"]);
});

Deno.test("fan-out: tables of different widths merge into one; a rolling run stops at the first unhealthy node", async () => {
  const merged = mergeTables([
    { node: "n1", code: 0, out: ["ID   STATE\nx    running"], err: [] },
    { node: "node-two", code: 0, out: ["ID            STATE\nlonger-name   finished"], err: [] },
  ], 8);
  assert.deepEqual(merged.split("\n"), [
    "NODE       ID            STATE",
    "n1         x             running",
    "node-two   longer-name   finished",
  ]);

  const ran: string[] = [];
  const fake = defineCommand({
    name: "reboot",
    summary: "",
    connects: true,
    flags: {},
    run: ({ flags, io }) => {
      ran.push(flags.endpoints![0]);
      io.out(`reboot requested (${flags.endpoints![0]})`);
      return Promise.resolve(0);
    },
  });
  const io = bufferIo();
  const code = await runFanOut(fake, { flags: {}, args: [], io }, ["a", "b", "c"], {
    waitHealthy: (node) =>
      node === "b"
        ? Promise.reject(new Error("not running 600 s after it went down"))
        : Promise.resolve(),
  });
  assert.equal(code, 1);
  assert.deepEqual(ran, ["a", "b"]);
  assert.match(io.stderr.join("\n"), /b: error: did not come back healthy: not running/);
  assert.match(io.stderr.join("\n"), /rolling: stopped at b; not run on c/);
});

Deno.test("upgrade --rolling: a node that came back on its old slot stops the roll; --stage and --wait=false are refused", async () => {
  const ran: string[] = [];
  const checked: string[] = [];
  const fake = defineCommand({
    name: "upgrade",
    summary: "",
    connects: true,
    flags: {},
    run: ({ flags, io }) => {
      const node = flags.endpoints![0];
      ran.push(node);
      if (node === "b") {
        io.err("error: the node came back on slot A: the trial of slot B failed");
        return Promise.resolve(1);
      }
      io.out(`upgraded ${node}`);
      return Promise.resolve(0);
    },
  });
  const io = bufferIo();
  const code = await runFanOut(fake, { flags: {}, args: [], io }, ["a", "b", "c"], {
    waitHealthy: (node) => (checked.push(node), Promise.resolve()),
  });
  assert.equal(code, 1);
  assert.deepEqual(ran, ["a", "b"]);
  assert.deepEqual(checked, ["a"], "a failed upgrade is not waited on");
  assert.match(io.stderr.join("\n"), /rolling: stopped at b; not run on c/);

  assert.ok(fanOutOptions({ rolling: true }, "upgrade").waitHealthy);
  assert.equal(fanOutOptions({}, "upgrade").waitHealthy, undefined);
  for (
    const [flags, command] of [[{ stage: true }, "upgrade"], [{ wait: false }, "rollback"]] as const
  ) {
    assert.throws(
      () => fanOutOptions({ rolling: true, ...flags }, command),
      (e: unknown) =>
        e instanceof CliError && e.exitCode === 2 && /--rolling waits/.test(e.message),
    );
  }
});
