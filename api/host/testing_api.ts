/**
 * Test support for the node's API PKI, root-free: machined's internal server
 * plus machined-edge (a child process, as on a node) reading the apid PKI
 * directory api/host/api_pki.ts writes. Shared by api_pki_test.ts and
 * maintenance_test.ts. Not for production.
 */
import { join } from "node:path";
import type { NodePki } from "../../pki/mod.ts";
import { type EdgeServer, spawnEdge } from "../edge/testing.ts";
import { createClientConfigIssuer, startInternalApiServer } from "../server/mod.ts";
import type { MaintenanceGate } from "../server/mod.ts";
import { RecordingActions } from "../testing.ts";
import { type ApiHandle, startNodeApiPki } from "./api_pki.ts";
import { ConfigKeeper } from "../../config/keeper/mod.ts";
import { configApplier } from "../../config/keeper/mod.ts";
import { Machined } from "../../core/mod.ts";
import { createLogger } from "../../logs/mod.ts";

/**
 * machined's internal server on `dir`/api.sock plus machined-edge on a
 * loopback port that stays the same across apid restarts; `maintenance`
 * gates the internal server as in maintenance mode.
 */
export function nodeTestApi(
  m: Machined,
  keeper: ConfigKeeper,
  dir: string,
  apidPkiDir: string,
  maintenance?: MaintenanceGate,
) {
  let apid: EdgeServer | undefined;
  let close = async () => {};
  let port = 0;
  const listen = async (socketPath: string) => {
    apid = await spawnEdge({ pkiDir: apidPkiDir, socketPath, hostname: "127.0.0.1", port });
    port = apid.port;
  };
  return {
    get port() {
      return port;
    },
    get endpoint() {
      return `127.0.0.1:${port}`;
    },
    /** Closes apid, then the internal server. */
    close: () => close(),
    async startApi(pki: NodePki): Promise<ApiHandle> {
      const socketPath = join(dir, "api.sock");
      const internal = await startInternalApiServer({
        socketPath,
        deps: {
          store: m.store,
          actions: new RecordingActions(),
          events: m.events,
          clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
          configs: configApplier(keeper),
          ...(maintenance ? { maintenance } : {}),
        },
      });
      await listen(socketPath);
      close = async () => {
        await apid?.close();
        await internal.close();
      };
      return {
        async restartApid() {
          await apid?.close();
          await listen(socketPath);
        },
      };
    },
  };
}

/** A running test node of {@link startTestNode}. */
export interface TestNode {
  /** `127.0.0.1:port`, the same across apid restarts. */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/**
 * A whole node's API in `dir`, root-free: a machined store, a config keeper
 * booted with `configText`, the API PKI owner (api_pki.ts) and machined-edge
 * in front, so a config applied over the API moves its CAs as on a node.
 */
export async function startTestNode(dir: string, configText: string): Promise<TestNode> {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  m.start();
  const keeper = new ConfigKeeper(m);
  const applied = await keeper.apply(configText, "image");
  if (applied.state !== "valid") throw new Error(`test node config is ${applied.state}`);
  const api = nodeTestApi(m, keeper, dir, join(dir, "apid-pki"));
  const pki = await startNodeApiPki({
    machined: m,
    keeper,
    pkiDir: join(dir, "pki"),
    apidPkiDir: join(dir, "apid-pki"),
    fallbackHostname: "machined",
    startApi: (p) => api.startApi(p),
    debounceMs: 10,
  });
  return {
    endpoint: api.endpoint,
    async stop() {
      await pki.stop();
      await api.close();
      await m.stop();
    },
  };
}
