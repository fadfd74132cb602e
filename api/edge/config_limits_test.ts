/**
 * `machine.api.max_message_bytes` and `machine.api.max_concurrent_streams`
 * reach apid as api/host/api_host.ts passes them: parsed from a machine config,
 * rendered into apid's command line, and enforced by a real apid process.
 */
import { deepEqual, equal } from "node:assert/strict";
import http2 from "node:http2";
import { join } from "node:path";
import { Code, type ConnectError } from "@connectrpc/connect";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createMachineClient } from "../client/mod.ts";
import { createClientConfigIssuer, startInternalApiServer } from "../server/mod.ts";
import { createTestPki, RecordingActions, seededStore, withTimeout } from "../testing.ts";
import { APID_DEFAULTS, apidLimitsFromConfig } from "./apid_options.ts";
import { spawnEdge } from "./testing.ts";

const CONFIG = `version: v1alpha1
machine:
  hostname: node-1
  api:
    max_message_bytes: 65536
    max_concurrent_streams: 7
`;

Deno.test("config limits: defaults without a config equal the schema's", () => {
  const parsed = parseMachineConfig("version: v1alpha1\nmachine:\n  hostname: n\n", "t");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  deepEqual(apidLimitsFromConfig(parsed.config.machine.api), apidLimitsFromConfig(undefined));
  equal(apidLimitsFromConfig(undefined).maxConcurrentStreams, APID_DEFAULTS.maxConcurrentStreams);
});

Deno.test("config limits: max_message_bytes and max_concurrent_streams reach a real apid", async () => {
  const parsed = parseMachineConfig(CONFIG, "machine.yaml");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const limits = apidLimitsFromConfig(parsed.config.machine.api);
  deepEqual(limits, { readMaxBytes: 65536, writeMaxBytes: 65536, maxConcurrentStreams: 7 });
  const pki = await createTestPki();
  const socketPath = join(pki.dir, "run", "api.sock");
  const internal = await startInternalApiServer({
    socketPath,
    deps: {
      store: seededStore(),
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
    },
    readMaxBytes: limits.readMaxBytes,
    writeMaxBytes: limits.writeMaxBytes,
  });
  const apid = await spawnEdge({
    ...limits,
    pkiDir: pki.dir,
    socketPath,
    hostname: "127.0.0.1",
    port: 0,
  });
  const admin = pki.clients["os:admin"];
  try {
    const port = apid.port;
    const session = http2.connect(`https://127.0.0.1:${port}`, {
      ca: pki.ca.certPem,
      cert: admin.certPem,
      key: admin.keyPem,
    });
    session.on("error", () => {});
    const advertised = await withTimeout(
      new Promise<number | undefined>((resolve) =>
        session.once("remoteSettings", (s) => resolve(s.maxConcurrentStreams))
      ),
      10_000,
      "remote settings",
    );
    session.destroy();
    equal(advertised, 7);

    const c = createMachineClient({
      endpoint: `127.0.0.1:${port}`,
      caPem: pki.ca.certPem,
      certPem: admin.certPem,
      keyPem: admin.keyPem,
    });
    try {
      let code: Code | undefined;
      await c.api.get({ type: "ms", id: "x".repeat(70 * 1024) }).catch((e: ConnectError) =>
        code = e.code
      );
      equal(code, Code.ResourceExhausted);
      equal((await c.api.get({ type: "ms", id: "machine" })).resource?.metadata?.id, "machine");
    } finally {
      c.close();
    }
  } finally {
    await apid.close();
    await internal.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
});
