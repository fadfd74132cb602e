/**
 * machined-edge as clients other than Deno's see it: openssl s_client reads
 * the TLS alert that names each refusal; a client's forged identity headers
 * never reach machined; maintenance mode asks for no certificate and forwards
 * the maintenance caller; with machined gone each protocol gets Unavailable;
 * the edge's counters are appended to GET /metrics.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startApiFixture, withTimeout } from "../testing.ts";
import { createCertificateAuthority } from "../../pki/mod.ts";
import { edgeBinaryBuilt, startEdgeServer } from "./testing.ts";

const built = edgeBinaryBuilt();
const haveOpenssl = await new Deno.Command("openssl", { args: ["version"], stdout: "null" })
  .output().then((o) => o.success, () => false);

/** What openssl s_client printed connecting with `cert` (none when absent). */
async function sClient(
  port: number,
  dir: string,
  caPem: string,
  cert?: { certPem: string; keyPem: string },
): Promise<string> {
  const id = crypto.randomUUID();
  await Deno.writeTextFile(join(dir, `${id}-ca.pem`), caPem);
  const args = [
    "s_client",
    "-connect",
    `127.0.0.1:${port}`,
    "-tls1_3",
    "-CAfile",
    join(dir, `${id}-ca.pem`),
  ];
  if (cert) {
    await Deno.writeTextFile(join(dir, `${id}.crt`), cert.certPem);
    await Deno.writeTextFile(join(dir, `${id}.key`), cert.keyPem);
    args.push("-cert", join(dir, `${id}.crt`), "-key", join(dir, `${id}.key`));
  }
  const child = new Deno.Command("openssl", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  const w = child.stdin.getWriter();
  // A request after the handshake, so the client reads the server's verdict.
  await w.write(new TextEncoder().encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
  await new Promise((r) => setTimeout(r, 500));
  await w.close();
  const out = await withTimeout(child.output(), 10_000, "openssl s_client");
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

Deno.test({
  name:
    "machined-edge: openssl s_client sees the TLS alert naming each refusal (needs the edge binary and openssl)",
  ignore: !built || !haveOpenssl,
}, async () => {
  const f = await startApiFixture();
  try {
    const port = f.apid.port;
    const cases: [string, { certPem: string; keyPem: string } | undefined, RegExp][] = [
      ["none", undefined, /alert certificate required/],
      ["foreign CA", f.pki.otherCa, /alert unknown ca/],
      ["expired", f.pki.expired, /alert certificate expired/],
      ["serverAuth only", f.pki.serverOnly, /alert unsupported certificate/],
      ["no EKU", f.pki.noEku, /alert unsupported certificate/],
      ["no digitalSignature", f.pki.noDigitalSignature, /alert unsupported certificate/],
      ["the CA certificate", f.pki.ca, /alert bad certificate/],
    ];
    for (const [what, cert, alert] of cases) {
      match(await sClient(port, f.pki.dir, f.pki.ca.certPem, cert), alert, what);
    }
    const good = await sClient(port, f.pki.dir, f.pki.ca.certPem, f.pki.clients["os:reader"]);
    ok(!/alert/.test(good) && /Verify return code: 0/.test(good), good);
    const metrics = await (await fetch(`https://localhost:${port}/metrics`, {
      client: Deno.createHttpClient({
        caCerts: [f.pki.ca.certPem],
        cert: f.pki.clients["os:reader"].certPem,
        key: f.pki.clients["os:reader"].keyPem,
      }),
    })).text();
    match(metrics, /\nmachined_edge_tls_refused_total [7-9]\n/);
    match(metrics, /machined_edge_tls_refused_by_reason_total\{reason="unknown_ca"\} 1\n/);
    match(metrics, /machined_edge_tls_refused_by_reason_total\{reason="no_certificate"\} 1\n/);
  } finally {
    await f.close();
  }
});

Deno.test({
  name:
    "machined-edge: maintenance mode asks for no certificate and forwards the maintenance caller (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  const edge = await startEdgeServer({
    maintenance: true,
    server: f.pki.server,
    socketPath: f.socketPath,
    pkiDir: join(f.pki.dir, "maintenance-pki"),
  });
  try {
    const res = await fetch(
      `https://localhost:${edge.port}/machined.v1.MachineService/Version`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "x-machined-role": "os:admin" },
        body: "{}",
        client: Deno.createHttpClient({ caCerts: [f.pki.ca.certPem] }),
      },
    );
    // machined refuses maintenance callers on a node not in maintenance mode, which shows
    // the edge forwarded the maintenance caller, not the forged admin.
    equal(res.status, 403, "PermissionDenied");
    match(await res.text(), /not in maintenance mode/);
  } finally {
    await edge.close();
    await f.close();
  }
});

Deno.test({
  name:
    "machined-edge: with machined gone, Connect gets 503 and gRPC grpc-status 14 (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  const client = Deno.createHttpClient({
    caCerts: [f.pki.ca.certPem],
    cert: f.pki.clients["os:reader"].certPem,
    key: f.pki.clients["os:reader"].keyPem,
  });
  try {
    await f.internal.close();
    const url = `https://localhost:${f.apid.port}/machined.v1.MachineService/Version`;
    const connect = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      client,
    });
    equal(connect.status, 503);
    match(await connect.text(), /"code":"unavailable"/);
    const grpc = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/grpc" },
      body: new Uint8Array(5),
      client,
    });
    equal(grpc.headers.get("grpc-status"), "14");
    await grpc.body?.cancel();
  } finally {
    client.close();
    await f.close();
  }
});

/** Resolves with the ms until the peer closes `conn` (reading and discarding). */
async function closedAfter(conn: Deno.Conn, timeoutMs: number): Promise<number> {
  const t = performance.now();
  const buf = new Uint8Array(4096);
  await withTimeout(
    (async () => {
      while ((await conn.read(buf).catch(() => null)) !== null);
    })(),
    timeoutMs,
    "peer close",
  );
  return performance.now() - t;
}

Deno.test({
  name:
    "machined-edge: handshake and idle timeouts bound what a client holds (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  const edge = await startEdgeServer({
    ca: f.pki.ca,
    server: f.pki.server,
    socketPath: f.socketPath,
    pkiDir: join(f.pki.dir, "limits-pki"),
    limits: { handshakeTimeoutMs: 300, idleTimeoutMs: 400 },
  });
  const reader = f.pki.clients["os:reader"];
  try {
    // A TCP connection that never says hello is closed after the handshake timeout.
    const silent = await Deno.connect({ hostname: "127.0.0.1", port: edge.port });
    const ms = await closedAfter(silent, 5000);
    ok(ms >= 250 && ms < 3000, `closed after ${ms} ms`);
    silent.close();
    // An authenticated connection with nothing in flight is closed after the idle timeout.
    const idle = await Deno.connectTls({
      hostname: "localhost",
      port: edge.port,
      caCerts: [f.pki.ca.certPem],
      cert: reader.certPem,
      key: reader.keyPem,
      alpnProtocols: ["http/1.1"],
    });
    await idle.handshake();
    const idleMs = await closedAfter(idle, 5000);
    ok(idleMs >= 300 && idleMs < 4000, `idle closed after ${idleMs} ms`);
    idle.close();
    // Handshakes, connections and streams per source and per node: budgets_edge_test.ts.
  } finally {
    await edge.close();
    await f.close();
  }
});

Deno.test({
  name:
    "machined-edge: a call in flight when it is told to stop (a restart) is answered, not cut (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  const slow = f.actions.reset.bind(f.actions);
  f.actions.reset = async (request, by) => {
    await new Promise((r) => setTimeout(r, 1000));
    return await slow(request, by);
  };
  try {
    const c = f.client();
    const answer = c.api.reset({});
    await new Promise((r) => setTimeout(r, 300));
    Deno.kill(f.apid.pid, "SIGTERM");
    const r = await withTimeout(answer, 10_000, "the reset answer");
    equal(r.challenge, "test-challenge");
    // The listener closed at once: a new connection is refused until the next start.
    await withTimeout(f.apid.close(), 10_000, "the edge's exit");
  } finally {
    await f.close();
  }
});

Deno.test({
  name:
    "machined-edge: SIGHUP reloads its PKI directory for new connections; an open one keeps going (needs the edge binary)",
  ignore: !built,
}, async () => {
  const f = await startApiFixture();
  try {
    const kept = f.client();
    equal((await kept.api.version({})).version, "0.1.0-test");
    // Another CA in the edge's directory, as machined writes it when the config's CA changes.
    const other = await createCertificateAuthority();
    await Deno.writeTextFile(join(f.pki.dir, "edge-pki", "ca.crt"), other.certPem);
    Deno.kill(f.apid.pid, "SIGHUP");
    await new Promise((r) => setTimeout(r, 500));
    const fresh = f.client();
    const refused = await fresh.api.version({}).then(() => "answered", (e) => String(e));
    match(refused, /unknown.?ca|UnknownCA|certificate/i);
    equal((await kept.api.version({})).version, "0.1.0-test", "the open connection still works");
  } finally {
    await f.close();
  }
});
