/**
 * A minimal machined for process-split tests: serves MachineService on the
 * internal socket and supervises a real apid (machined-edge) through the native
 * process backend. Tests run it as a subprocess (the native reaper owns
 * waitid for its whole process, so it must not share one with tests using
 * Deno.Command). Prints JSON lines: {"harness":"apid-ready",pid,port} each time
 * apid comes up, {"harness":"stopped"} at the end. Stops on SIGTERM.
 *
 * Usage: deno run -A node_harness.ts <pkiDir> <port>
 */
import { EventBus } from "../../events/mod.ts";
import { join } from "node:path";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { RecordingActions, seededStore } from "../testing.ts";
import { createClientConfigIssuer, startInternalApiServer } from "../server/mod.ts";
import { APID_DEFAULTS, ApidSupervisor, edgeProcessSpec } from "../edge/mod.ts";
import { loadOrCreateNodePki } from "../../pki/mod.ts";

const [pkiDir, portText] = Deno.args;
const socketPath = join(pkiDir, "run", "api.sock");
const pki = await loadOrCreateNodePki(pkiDir, {
  hostnames: ["localhost"],
  addresses: ["127.0.0.1"],
});
const store = seededStore();
const internal = await startInternalApiServer({
  socketPath,
  deps: {
    store,
    actions: new RecordingActions(),
    events: new EventBus(),
    clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
  },
});
const out = (v: unknown) => console.log(JSON.stringify(v));
const apid = {
  ...APID_DEFAULTS,
  pkiDir,
  socketPath,
  hostname: "127.0.0.1",
  port: Number(portText),
};
const supervisor = new ApidSupervisor({
  backend: nativeProcessBackend(),
  spec: edgeProcessSpec({ apid }),
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  onEvent: (e) => {
    if (e.kind === "ready") out({ harness: "apid-ready", pid: e.pid, port: e.port });
    else if (e.kind === "exited") out({ harness: "apid-exited", exit: e.exit });
    else if (e.kind === "output") console.error(`apid[${e.pid}] ${e.line}`);
    else if (e.kind === "spawnFailed") console.error("apid spawn failed", e.error);
  },
});
supervisor.start();
const { promise, resolve } = Promise.withResolvers<void>();
Deno.addSignalListener("SIGTERM", () => resolve());
await promise;
await supervisor.stop();
await internal.close();
out({ harness: "stopped" });
Deno.exit(0);
