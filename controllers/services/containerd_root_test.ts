/**
 * Debian's real containerd, run by the supervisor from a machine config with
 * its socket, state and root in a temp dir: RuntimeReady is observed through
 * the CRI probe, a killed containerd reads not-ready and comes back after its
 * restart. Needs root (containerd mounts and chowns) and /usr/bin/containerd.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  RUNTIME_STATUS,
  SERVICE_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { createSupervisor } from "../../supervisor/mod.ts";
import { runtimeControllers } from "./mod.ts";

const BINARY = "/usr/bin/containerd";
const hasBinary = await Deno.stat(BINARY).then(() => true, () => false);
const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping containerd test: it needs root");
else if (!hasBinary) {
  console.log(`skipping containerd test: ${BINARY} missing (apt install containerd runc)`);
}

Deno.test({
  name:
    "containerd (real): RuntimeReady via CRI, not-ready when killed, ready again after restart " +
    "(needs root, containerd and runc)",
  ignore: !isRoot || !hasBinary,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ctd-" });
    const socket = `${dir}/run/containerd.sock`;
    const store = new Store<ResourceSpecs>();
    const runtime = new ControllerRuntime(store);
    for (
      const c of runtimeControllers({
        containerd: {
          root: `${dir}/root`,
          state: `${dir}/state`,
          configPath: `${dir}/config.toml`,
        },
        runtimeStatus: { intervalMs: 250 },
      })
    ) runtime.register(c);
    const process = nativeProcessBackend();
    const supervisor = createSupervisor({ store, process });
    runtime.start();
    const status = (pred: (s: ResourceSpecs["ServiceStatus"]) => boolean, ms = 30_000) =>
      waitForResource(
        store,
        SERVICE_STATUS,
        (r) => r.metadata.id === "containerd" && pred(r.spec),
        ms,
      );
    const runtimeStatus = (pred: (s: ResourceSpecs["RuntimeStatus"]) => boolean, ms = 30_000) =>
      waitForResource(store, RUNTIME_STATUS, (r) => pred(r.spec), ms);
    try {
      const parsed = parseMachineConfig(
        `version: v1alpha1\nmachine:\n  hostname: n\n  runtime:\n    containerd:\n      socket: ${socket}\n`,
        "test.yaml",
      );
      assert.ok(parsed.ok);
      await store.modify(
        { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
        "test",
        () => ({ source: "test", config: parsed.config }),
      );
      const t0 = performance.now();
      const started = await status((s) => s.pid !== null);
      const tSpawn = performance.now();
      await status((s) => s.healthy);
      const tHealthy = performance.now();
      const ready = await runtimeStatus((s) => s.ready);
      const tReady = performance.now();
      assert.equal(ready.spec.runtimeName, "containerd");
      assert.equal(ready.spec.runtimeApiVersion, "v1");
      assert.match(await Deno.readTextFile(`${dir}/config.toml`), /address = ".*containerd.sock"/);
      console.log(
        `containerd ${ready.spec.runtimeVersion}: spawn ${
          (tSpawn - t0).toFixed(0)
        } ms after config; ` +
          `service healthy (CRI RuntimeReady) ${(tHealthy - tSpawn).toFixed(0)} ms after spawn; ` +
          `RuntimeStatus ready ${(tReady - tSpawn).toFixed(0)} ms after spawn; ` +
          `networkReady=${ready.spec.networkReady}`,
      );

      const tKill = performance.now();
      await process.signal({ pid: started.spec.pid! }, "SIGKILL");
      const down = await runtimeStatus((s) => !s.ready);
      const tDown = performance.now();
      // Whichever comes first: the service's exit, or a probe refused by the dead socket.
      assert.match(down.spec.lastError, /containerd is backing-off|ECONNREFUSED|ENOENT/);
      const restarted = await status((s) => s.healthy && s.pid !== started.spec.pid);
      await runtimeStatus((s) => s.ready);
      const tBack = performance.now();
      assert.equal(restarted.spec.restarts, 1);
      assert.equal(restarted.spec.lastExit?.signal, "SIGKILL");
      console.log(
        `killed: RuntimeStatus not ready after ${(tDown - tKill).toFixed(0)} ms; ` +
          `ready again after ${(tBack - tKill).toFixed(0)} ms (includes the 1 s restart backoff)`,
      );
      const logs = [];
      for await (const l of supervisor.logs("containerd", { tail: 500 })) logs.push(l.text);
      assert.ok(logs.some((l) => l.includes("serving...")), "containerd's output was not captured");
    } finally {
      await supervisor.close();
      await runtime.stop();
      await process.close();
      const last = store.find(SERVICE_STATUS, "runtime", "containerd")?.spec;
      assert.equal(last?.lastExit?.killedAfterGrace, false, "containerd did not stop on SIGTERM");
      await Deno.remove(dir, { recursive: true });
    }
  },
});
