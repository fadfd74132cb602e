/**
 * The process split, for real: a mini machined (testdata/node_harness.ts) runs
 * the internal server and supervises a real apid process through the native
 * process backend. Killing apid, or the client pattern that crashes Deno's
 * HTTP/2 server in 2.9.4–2.9.6 (denoland/deno#36788: hundreds of requests on
 * one connection, then an abrupt close), must never take machined down.
 */
import { equal, notEqual, ok } from "node:assert/strict";
import http2 from "node:http2";
import * as tls from "node:tls";
import { NATIVE_ADDON_PATH } from "../../native-ops/mod.ts";
import { createTestPki, type TestPki, withTimeout } from "../testing.ts";
import { createMachineClient } from "../client/mod.ts";
import { jsonLineReader } from "../testing_json_lines.ts";

const haveAddon = await Deno.stat(NATIVE_ADDON_PATH).then(() => true, () => false);
if (!haveAddon) console.log(`skipping process split tests: ${NATIVE_ADDON_PATH} is not built`);

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

type HarnessLine = { harness: string; pid?: number; port?: number };

function startHarness(pki: TestPki, port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../testdata/node_harness.ts", import.meta.url).pathname,
      pki.dir,
      String(port),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const next = jsonLineReader<HarnessLine>(child.stdout, "harness");
  const waitFor = async (kind: string): Promise<HarnessLine> => {
    for (;;) {
      const l = await withTimeout(next(), 30_000, `harness ${kind}`);
      if (l.harness === kind) return l;
    }
  };
  return { child, waitFor };
}

async function version(pki: TestPki, port: number): Promise<string> {
  const c = createMachineClient({
    endpoint: `127.0.0.1:${port}`,
    caPem: pki.ca.certPem,
    certPem: pki.clients["os:reader"].certPem,
    keyPem: pki.clients["os:reader"].keyPem,
  });
  try {
    return (await withTimeout(c.api.version({}), 10_000, "Version")).version;
  } finally {
    c.close();
  }
}

/** `count` Connect JSON requests on one HTTP/2 connection, then destroy the socket mid-flight. */
async function hammerThenSlam(pki: TestPki, port: number, count: number): Promise<number> {
  const socket = tls.connect({
    host: "127.0.0.1",
    port,
    servername: "localhost",
    ALPNProtocols: ["h2"],
    ca: pki.ca.certPem,
    cert: pki.clients["os:reader"].certPem,
    key: pki.clients["os:reader"].keyPem,
  });
  socket.on("error", () => {});
  const session = http2.connect(`https://127.0.0.1:${port}`, { createConnection: () => socket });
  session.on("error", () => {});
  let ok = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const req = session.request({
        ":method": "POST",
        ":path": "/machined.v1.MachineService/Version",
        "content-type": "application/json",
      });
      req.on("response", (h) => {
        if (h[":status"] === 200) ok++;
      });
      req.on("data", () => {});
      req.on("close", () => resolve());
      req.on("error", () => resolve());
      req.end("{}");
    });
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, one));
  }
  // Leave requests in flight and kill the TCP connection under them.
  for (let i = 0; i < 20; i++) void one();
  socket.destroy();
  session.destroy();
  return ok;
}

Deno.test({
  name: "process split: deno#36788 pattern and killing apid never take machined down " +
    "(needs the native addon)",
  ignore: !haveAddon,
  fn: async () => {
    const pki = await createTestPki();
    const port = freePort();
    const h = startHarness(pki, port);
    try {
      const first = await h.waitFor("apid-ready");
      equal(first.port, port);
      equal(await version(pki, port), "0.1.0-test");

      for (let round = 0; round < 3; round++) {
        const ok300 = await hammerThenSlam(pki, port, 300);
        equal(ok300, 300, `round ${round}`);
      }
      // apid and machined both still answer, and apid did not restart.
      equal(await version(pki, port), "0.1.0-test");

      Deno.kill(first.pid!, "SIGKILL");
      const exited = await h.waitFor("apid-exited");
      ok(exited);
      const second = await h.waitFor("apid-ready");
      notEqual(second.pid, first.pid);
      equal(await version(pki, port), "0.1.0-test");
    } finally {
      h.child.kill("SIGTERM");
      await withTimeout(h.waitFor("stopped"), 15_000, "harness stop").catch(() => {});
      const status = await withTimeout(h.child.status, 15_000, "harness exit");
      equal(status.code, 0);
      await Deno.remove(pki.dir, { recursive: true });
    }
  },
});
