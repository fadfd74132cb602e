import { doesNotMatch, equal, match } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { createMachineClient } from "../api/client/mod.ts";
import { createTestPki, startApiFixture, withTimeout } from "../api/testing.ts";
import { describeError } from "./errors.ts";
import { classifyFailure, isTransportFailure } from "./failure_classification.ts";
import { probeConnection, type ProbeResult } from "./connection_probe.ts";
import { join } from "node:path";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../pki/mod.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

const CANCEL = new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled);
const at = "127.0.0.1:50000";

Deno.test("classifyFailure: each probe outcome names its cause, in one line", () => {
  const say = (probe: ProbeResult, refusal?: string) =>
    classifyFailure({ error: CANCEL, endpoint: at, probe, refusal });
  match(
    say({ kind: "refused", detail: "x" }),
    /^cannot reach the node at 127\.0\.0\.1:50000: connection refused/,
  );
  equal(
    say({ kind: "handshake_timeout", ms: 5000 }),
    "the node at 127.0.0.1:50000 timed out after 5 s during the TLS handshake (the node may be slow or overloaded)",
  );
  match(say({ kind: "connect_timeout", ms: 5000 }), /TCP connection timed out after 5 s$/);
  match(
    say({ kind: "untrusted", detail: "UnknownIssuer" }),
    /certificate this context's CA does not trust \(UnknownIssuer\)$/,
  );
  equal(
    say({ kind: "alert", detail: "received fatal alert: CertificateExpired" }, "it expired on X"),
    "the node at 127.0.0.1:50000 refused this client certificate: it expired on X (TLS alert certificate_expired)",
  );
  match(
    say({ kind: "served" }),
    /^the node at 127\.0\.0\.1:50000 closed the connection \(http\/2 stream closed with error code CANCEL \(0x8\)\); it accepts this client now/,
  );
  // An answer of the node is never second-guessed by a probe.
  const budget = new ConnectError("too many streams", Code.ResourceExhausted);
  equal(isTransportFailure(budget), false);
  match(
    classifyFailure({ error: budget, endpoint: at }),
    /refused this call to stay within its budget \(ResourceExhausted: too many streams\)/,
  );
  equal(isTransportFailure(new ConnectError("no such service", Code.NotFound)), false);
});

Deno.test("probe: a closed port is refused", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  const pki = await createTestPki();
  const p = await probeConnection({
    host: "127.0.0.1",
    port,
    caPem: pki.ca.certPem,
    timeoutMs: 2000,
  });
  equal(p.kind, "refused");
});

Deno.test("a node that accepts TCP and never answers: timed out during the TLS handshake, not a refused certificate", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of l) held.push(c);
  })();
  const pki = await createTestPki();
  const admin = pki.clients["os:admin"];
  const endpoint = `127.0.0.1:${l.addr.port}`;
  try {
    // The client's own bound: the call fails, whatever its transport error says.
    const client = createMachineClient({
      endpoint,
      caPem: pki.ca.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
      connectTimeoutMs: 300,
    });
    const error = await withTimeout(client.api.version({}).catch((e) => e), 5000, "call");
    client.close();
    equal(isTransportFailure(error), true);
    const probe = await probeConnection({
      host: "127.0.0.1",
      port: l.addr.port,
      caPem: pki.ca.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
      timeoutMs: 300,
    });
    equal(probe.kind, "handshake_timeout");
    const line = classifyFailure({ error, endpoint, probe });
    equal(
      line,
      `the node at ${endpoint} timed out after 0.3 s during the TLS handshake (the node may be slow or overloaded)`,
    );
    doesNotMatch(describeError(error, endpoint), /rejected this client certificate/);
  } finally {
    l.close();
    await accepting;
    for (const c of held) c.close();
  }
});

Deno.test("probe: a TLS server with another CA is not trusted", async () => {
  const ours = await createTestPki();
  const theirs = await createTestPki();
  const l = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: theirs.server.certPem,
    key: theirs.server.keyPem,
  });
  const serving = (async () => {
    for await (const c of l) {
      await c.handshake().catch(() => {});
      c.close();
    }
  })();
  try {
    const p = await probeConnection({
      host: "127.0.0.1",
      port: l.addr.port,
      caPem: ours.ca.certPem,
      timeoutMs: 2000,
    });
    equal(p.kind, "untrusted", JSON.stringify(p));
  } finally {
    l.close();
    await serving;
  }
});

Deno.test("probe: the edge refuses a client certificate from another CA with an alert; a good one is served", async () => {
  const f = await startApiFixture();
  try {
    const target = {
      host: "127.0.0.1",
      port: f.apid.port,
      caPem: f.pki.ca.certPem,
      timeoutMs: 3000,
    };
    const refused = await probeConnection({
      ...target,
      certPem: f.pki.otherCa.certPem,
      keyPem: f.pki.otherCa.keyPem,
    });
    equal(refused.kind, "alert", JSON.stringify(refused));
    match(
      classifyFailure({ error: CANCEL, probe: refused }),
      /^the node refused this client certificate \(TLS alert unknown_ca\)$/,
    );
    const admin = f.pki.clients["os:admin"];
    const served = await probeConnection({
      ...target,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
    });
    equal(served.kind, "served");
  } finally {
    await f.close();
  }
});

Deno.test("machinectl names a closed port as refused, through its own client and probe", async () => {
  const pki = await createTestPki();
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const endpoint = `127.0.0.1:${l.addr.port}`;
  l.close();
  const path = join(pki.dir, "ctl.yaml");
  const ctx = contextFromPem([endpoint], { caPem: pki.ca.certPem, ...pki.clients["os:admin"] });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  const io = bufferIo();
  const code = await withTimeout(
    runMachinectl(["--config", path, "version", "-e", endpoint], io),
    20_000,
    "cli",
  );
  equal(code, 1);
  match(
    io.stderr.join("\n"),
    new RegExp(
      `^error: cannot reach the node at ${endpoint}: connection refused \\(nothing listens`,
    ),
  );
});

Deno.test("a node's DeadlineExceeded refusal is its answer, printed with its reason, not a transport failure", () => {
  const stalled = new ConnectError(
    "bundle refused (stalled): no byte of the bundle for 30 s (the idle deadline)",
    Code.DeadlineExceeded,
  );
  equal(isTransportFailure(stalled), false);
  const text = classifyFailure({
    error: stalled,
    endpoint: "127.0.0.1:50000",
    probe: { kind: "served" } as ProbeResult,
  });
  match(text, /^DeadlineExceeded: bundle refused \(stalled\)/);
  doesNotMatch(text, /closed the connection|did not answer/);
  const own = new ConnectError("the operation timed out", Code.DeadlineExceeded);
  match(describeError(own, "127.0.0.1:50000"), /did not answer in time/);
});
