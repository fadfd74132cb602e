/**
 * A node's API as boot/node_main.ts runs it, for the privileged PKI tests:
 * machined's store and config keeper, api/host/api_pki.ts choosing the CA and
 * writing both PKI directories under `<root>/run/machined`, startApiHost
 * supervising a real apid process (machined-edge, as in an image) through
 * the native process backend, as apid's user when `dropUser`. With
 * `watchAddresses`, the real AddressStatusController (rtnetlink) feeds the
 * server certificate's names. Runs as its own process: the native reaper owns
 * waitid for the whole process.
 *
 * Usage: deno run -A api_pki_harness.ts '<json HarnessOptions>'
 * Prints JSON lines: {"harness":"apid","action":"ready"|"certificateReissued"|"controllersStarted",...}
 * for every `api` event. Stops on SIGTERM and prints {"harness":"stopped"}.
 */
import { join } from "node:path";
import { createLogger } from "../../logs/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { NativeNetworkBackend } from "../../platform/network/mod.ts";
import { addressStatusController } from "../../controllers/network/mod.ts";
import { type ApiHost, startApiHost, startNodeApiPki } from "../../api/host/mod.ts";
import { ConfigKeeper } from "../../config/keeper/mod.ts";
import { Machined } from "../../core/mod.ts";
import { nodeActions } from "../node_actions.ts";

/** What the test asks for. */
export interface HarnessOptions {
  /** Holds `etc/config.yaml`; the harness creates `run/machined` there. */
  root: string;
  listen: string;
  dropUser: boolean;
  /** machined-edge, copied where apid's user can run it. */
  edgeBinary: string;
  watchAddresses: boolean;
  debounceMs: number;
  /**
   * Start machined's controllers only on SIGUSR1, so the test can dial while an
   * address the first certificate cannot name is not yet reported (as a DHCP
   * lease is, until the address controller sees it); the PKI acts on a change
   * at once, so a delay is the only way to dial before the re-issue.
   */
  startOnSigusr1?: boolean;
}

const o = JSON.parse(Deno.args[0]) as HarnessOptions;
const out = (v: Record<string, unknown>) => console.log(JSON.stringify({ harness: "apid", ...v }));
const logger = createLogger({ console: false });
const machined = new Machined({ mode: "node", pid1: false, logger });
const network = o.watchAddresses ? new NativeNetworkBackend() : undefined;
if (network) machined.register([addressStatusController({ backend: network })]);
const keeper = new ConfigKeeper(machined);
await keeper.apply(await Deno.readTextFile(join(o.root, "etc", "config.yaml")), "image");
const runDir = join(o.root, "run", "machined");
await Deno.mkdir(runDir, { recursive: true, mode: 0o755 });
await Deno.chmod(runDir, 0o755);

const events = machined.events.subscribe();
(async () => {
  for await (const e of events) {
    if (e.kind === "api") out({ action: e.action, message: e.message, ...e.fields });
  }
})();

const processBackend = nativeProcessBackend();
let api: ApiHost | undefined;
const pki = await startNodeApiPki({
  machined,
  keeper,
  pkiDir: join(runDir, "pki"),
  apidPkiDir: join(runDir, "apid-pki"),
  fallbackHostname: "machined",
  debounceMs: o.debounceMs,
  startApi: async (p) => {
    const host = api = await startApiHost({
      machined,
      pki: p,
      pkiDir: join(runDir, "apid-pki"),
      runDir,
      listen: o.listen,
      processBackend,
      endpoints: () => [o.listen],
      dropUser: o.dropUser,
      edgeBinary: o.edgeBinary,
      actions: nodeActions({ hostname: () => "machined", logger, onPower: () => {} }),
    });
    return {
      async restartApid() {
        await host.supervisor.stop();
        host.supervisor.start();
      },
    };
  },
});
if (o.startOnSigusr1) {
  Deno.addSignalListener("SIGUSR1", () => {
    machined.start();
    out({ action: "controllersStarted" });
  });
} else machined.start();
if (!api) out({ action: "notStarted" });

const { promise, resolve } = Promise.withResolvers<void>();
Deno.addSignalListener("SIGTERM", () => resolve());
await promise;
await pki.stop();
await api?.stop();
await machined.stop();
events.close();
console.log(JSON.stringify({ harness: "stopped" }));
Deno.exit(0);
