/**
 * "API ready" through the real machined-edge, as machined wires it
 * (startApiHost with the native process backend): the line comes only after
 * the probe's mutual-TLS Version call was answered, the probe's own calls are
 * not "first served", a client's first call is; and a server certificate
 * the probe cannot verify for its address gives `probe=timeout` with the
 * reason in the log, never a hang.
 *
 * In the root tier although it needs no root: the native process backend's
 * reaper waits for every child of the test process (waitid P_ALL), so beside
 * other test files under `--parallel` it reaps their children (a sibling's
 * `await child.status` then fails with ECHILD). The root tier runs its files
 * one at a time, and this file closes the backend before it ends.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { createTestPki, RecordingActions, type TestPki } from "../testing.ts";
import { edgeBinaryBuilt } from "../edge/testing.ts";
import { createMachineClient } from "../client/mod.ts";
import { prepareApidPki } from "./apid_pki.ts";
import { createLogger } from "../../logs/mod.ts";
import { createCertificateAuthority, issueServerCertificate } from "../../pki/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { Machined } from "../../core/mod.ts";
import { startApiHost } from "./api_host.ts";
import { reportApiReady } from "./api_ready_report.ts";
import { issueProbeCredentials } from "./api_probe_client.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An API host on 127.0.0.1 (a free port) behind the real edge serving `server`. */
async function withHost(
  pki: TestPki,
  server: TestPki["server"],
  body: (host: Awaited<ReturnType<typeof startApiHost>>, machined: Machined) => Promise<void>,
) {
  const machined = new Machined({
    mode: "dev",
    pid1: false,
    logger: createLogger({ console: false }),
  });
  const apidPki = join(pki.dir, "apid-pki");
  await prepareApidPki({ ca: pki.ca, server }, apidPki);
  const processBackend = nativeProcessBackend();
  const host = await startApiHost({
    machined,
    pki: { dir: pki.dir, ca: pki.ca, server, written: [] },
    pkiDir: apidPki,
    runDir: join(pki.dir, "run"),
    listen: "127.0.0.1:0",
    processBackend,
    actions: new RecordingActions(),
    endpoints: () => [],
    dropUser: false,
  });
  try {
    await body(host, machined);
  } finally {
    await host.stop();
    await processBackend.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
}

Deno.test({
  name:
    "API ready is printed once a call through the edge was answered; a client's first call is logged",
  ignore: !edgeBinaryBuilt(),
}, async () => {
  const pki = await createTestPki();
  await withHost(pki, pki.server, async (host, machined) => {
    const lines: string[] = [];
    const result = await reportApiReady({
      api: host,
      started: performance.now(),
      logger: machined.logger,
      machined,
      listen: "127.0.0.1:0",
      credentials: () => issueProbeCredentials(pki.ca),
      print: (l) => lines.push(l),
      figures: false,
    });
    equal(result.outcome, "ok", result.lastError);
    equal(result.address, "127.0.0.1");
    equal(lines.length, 1, lines.join("\n"));
    match(
      lines[0],
      /^machined: API ready pid=\d+ port=\d+ machined_ms=\d+ uptime_s=[\d.]+ probe=ok probe_ms=\d+ probe_attempts=1 probe_addr=127\.0\.0\.1 listen_ms=\d+$/,
    );
    const { port } = await host.ready();
    const client = createMachineClient({
      endpoint: `127.0.0.1:${port}`,
      caPem: pki.ca.certPem,
      certPem: pki.clients["os:operator"].certPem,
      keyPem: pki.clients["os:operator"].keyPem,
    });
    try {
      await client.api.version({});
    } finally {
      client.close();
    }
    for (let i = 0; i < 100 && lines.length < 2; i++) await sleep(20);
    equal(lines.length, 2, lines.join("\n"));
    match(
      lines[1],
      /^machined: api first served machined_ms=\d+ uptime_s=[\d.]+ role=os:operator$/,
    );
  });
});

Deno.test({
  name: "a server certificate the probe cannot verify gives probe=timeout with the reason, bounded",
  ignore: !edgeBinaryBuilt(),
}, async () => {
  const pki = await createTestPki();
  const stranger = await issueServerCertificate({
    ca: await createCertificateAuthority({}),
    hostnames: ["localhost"],
    addresses: ["127.0.0.1"],
  });
  await withHost(pki, stranger, async (host, machined) => {
    const lines: string[] = [];
    const result = await reportApiReady({
      api: host,
      started: performance.now(),
      logger: machined.logger,
      machined,
      listen: "127.0.0.1:0",
      credentials: () => issueProbeCredentials(pki.ca),
      print: (l) => lines.push(l),
      figures: false,
      // An attempt long enough for a TLS handshake on a loaded host (a 1 s one expired
      // before the certificate was refused while QEMU ran beside it).
      bounds: { deadlineMs: 6_000, retryMs: 200, attemptTimeoutMs: 4_000 },
    });
    equal(result.outcome, "timeout");
    ok(result.attempts >= 1, `attempts: ${result.attempts}`);
    match(String(result.lastError), /certificate/i);
    equal(lines.length, 1, lines.join("\n"));
    match(lines[0], / probe=timeout probe_ms=\d+ probe_attempts=\d+ probe_addr=127\.0\.0\.1 /);
    const warned = machined.logger.ring.tail(50).map((l) => l.text)
      .some((t) => t.includes("the API probe got no answer (timeout)"));
    ok(warned, "the timeout's reason is logged");
  });
});
