/**
 * Issue 25 item 4: what a node sends is data. Each command that prints node
 * data is run against the real apid and machined-side server whose fakes
 * hold EVIL (escaping_testing.ts) in a service id, argv, exec path, event
 * message, log line, kernel record, version field or error message; the
 * output must show it escaped and never send it raw, in every format.
 */
import { equal } from "node:assert/strict";
import { ConnectError } from "@connectrpc/connect";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { fakeServiceSpec } from "../api/testing_node.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";
import { clientConfig, runCli } from "./testing.ts";
import { assertEscaped, EVIL } from "./escaping_testing.ts";

async function withNode(test: (f: ApiFixture, config: string) => Promise<void>): Promise<void> {
  const f = await startApiFixture();
  try {
    await test(f, await clientConfig(f, "os:admin"));
  } finally {
    await f.close();
  }
}

/** Runs a following command until it has printed `lines` lines, then stops it as Ctrl-C would. */
async function runUntil(config: string, lines: number, ...argv: string[]) {
  const io = bufferIo();
  const abort = new AbortController();
  const inner = io.out;
  io.out = (t) => {
    inner(t);
    if (io.stdout.length >= lines) abort.abort();
  };
  const code = await runMachinectl(["--config", config, ...argv], io, { signal: abort.signal });
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("service: an id, argv and message with escapes are shown escaped in table, json and yaml", () =>
  withNode(async (f, config) => {
    f.services.add(EVIL, fakeServiceSpec([`/bin/${EVIL}`, EVIL]), { message: EVIL });
    let r = await runCli(config, "service");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text", 2);
    equal(r.out.split("\n").length, 4, "one row per service: containerd, payload, the evil one");
    r = await runCli(config, "service", "-o", "json");
    assertEscaped(r.out, "json", 4);
    equal(JSON.parse(r.out)[2].id, EVIL, "JSON still parses to the node's value");
    r = await runCli(config, "service", "-o", "yaml");
    assertEscaped(r.out, "yaml", 3); // id, argv[1], message (argv[0] is "/bin/" + EVIL)
    r = await runCli(config, "service", "nope");
    equal(r.code, 1);
    assertEscaped(r.err, "text");
  }));

Deno.test("get: resource ids and fields with escapes, in table, json and yaml", () =>
  withNode(async (f, config) => {
    f.store.create({
      type: "ServiceStatus",
      namespace: "runtime",
      id: EVIL,
      owner: "test",
      spec: { ...f.services.get("payload").status, message: EVIL },
      labels: { [EVIL]: EVIL },
    });
    let r = await runCli(config, "get", "services");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text", 2);
    r = await runCli(config, "get", "services", "-o", "json");
    assertEscaped(r.out, "json", 4);
    r = await runCli(config, "get", "services", "-o", "yaml");
    assertEscaped(r.out, "yaml", 4);
  }));

Deno.test("events: subject, message and fields with escapes, in table, json and yaml", () =>
  withNode(async (f, config) => {
    f.events.emit("service", EVIL, "failed", EVIL, { [EVIL]: EVIL });
    for (
      const [format, style] of [["table", "text"], ["json", "json"], ["yaml", "yaml"]] as const
    ) {
      const r = await runUntil(config, 1, "events", "--tail", "1", "-o", format);
      equal(r.code, 0, r.err);
      assertEscaped(r.out, style, 4);
      if (format === "table") equal(r.out.split("\n").length, 1, "one event, one line");
    }
  }));

Deno.test("logs and logs -f: a line with escapes, a CR and a forged line stays one escaped line", () =>
  withNode(async (f, config) => {
    f.logs.push("payload", EVIL, "stdout");
    f.logs.push("payload", "next", "stdout");
    let r = await runCli(config, "logs", "payload");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text");
    equal(r.out.split("\n").length, 2, "two entries, two lines");
    r = await runCli(config, "logs", "payload", "-t");
    assertEscaped(r.out, "text");
    r = await runUntil(config, 2, "logs", "payload", "-f");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text");
  }));

Deno.test("dmesg: a kernel record with escapes is shown escaped", () =>
  withNode(async (f, config) => {
    f.kernelLog.log(EVIL);
    const r = await runCli(config, "dmesg");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text");
    equal(r.out.split("\n").length, 1);
  }));

Deno.test("version: the node's version fields with escapes are shown escaped", () =>
  withNode(async (f, config) => {
    const base = f.actions.version();
    f.actions.version = () => ({ ...base, version: EVIL, commit: EVIL, os: EVIL });
    const r = await runCli(config, "version");
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text", 3);
  }));

Deno.test("errors: a node's grpc-message with escapes and a line break is one escaped line", () =>
  withNode(async (f, config) => {
    f.services.stop = () => Promise.reject(new Error(EVIL));
    const r = await runCli(config, "service", "stop", "payload");
    equal(r.code, 1);
    assertEscaped(r.err, "text");
    equal(r.err.split("\n").length, 1, r.err);
  }));

Deno.test("fan-out (-n): node output, prefixes and JSON per node stay escaped", () =>
  withNode(async (f, config) => {
    f.logs.push("payload", EVIL, "stdout");
    f.services.add(EVIL, fakeServiceSpec(["/bin/x"]), { message: EVIL });
    const port = f.endpoint.split(":")[1];
    const nodes = `127.0.0.1:${port},localhost:${port}`;
    let r = await runCli(config, "logs", "payload", "-n", nodes);
    equal(r.code, 0, r.err);
    assertEscaped(r.out, "text", 2);
    r = await runCli(config, "service", "-n", nodes);
    assertEscaped(r.out, "text", 4);
    r = await runCli(config, "service", "-n", nodes, "-o", "json");
    assertEscaped(r.out, "json", 2);
  }));

Deno.test("errorForDisplay keeps a ConnectError's code and escapes only its message", async () => {
  const { errorForDisplay } = await import("./error_text.ts");
  const e = new ConnectError(EVIL, 5);
  const shown = errorForDisplay(e, (x) => `${(x as ConnectError).code}: ${(x as Error).message}`);
  assertEscaped(shown, "text");
  equal(shown.startsWith("5: [not_found] "), true, shown);
});
