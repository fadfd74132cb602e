import assert from "node:assert/strict";
import { startFakeCriServer } from "../../cri/testing.ts";
import {
  type ResourceSpecs,
  RUNTIME_STATUS,
  SERVICE_SPEC,
  SERVICE_STATUS,
  type ServiceStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { containerdServiceSpec } from "./service_spec_controller.ts";
import { runtimeStatusController } from "./runtime_status_controller.ts";
import { DEFAULT_CONTAINERD_PATHS } from "../../cri/mod.ts";

const status = (state: ServiceStatusSpec["state"]): ServiceStatusSpec => ({
  state,
  healthy: false,
  restarts: 0,
  pid: null,
  lastExit: null,
  message: "",
  since: 0,
  logFileError: "",
  sandbox: null,
});

Deno.test("RuntimeStatus maps CRI conditions, follows the probe, and drops at once when containerd stops", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rt-status-" });
  const server = await startFakeCriServer(`${dir}/cri.sock`);
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  // A generous call timeout: on a loaded 2-core host a 500 ms one expired (CI's fake tier).
  runtime.register(runtimeStatusController({ intervalMs: 20, timeoutMs: 5_000 }));
  runtime.start();
  try {
    store.create({
      type: SERVICE_SPEC,
      namespace: "runtime",
      id: "containerd",
      owner: "test",
      spec: containerdServiceSpec(DEFAULT_CONTAINERD_PATHS, server.socket, ""),
    });
    const ptr = { type: SERVICE_STATUS, namespace: "runtime", id: "containerd" } as const;
    store.create({ ...ptr, owner: "test", spec: status("starting") });
    server.conditions = [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      { type: "NetworkReady", status: false, reason: "NetworkPluginNotReady", message: "no cni" },
    ];
    const ready = await waitForResource(store, RUNTIME_STATUS, (r) => r.spec.ready);
    assert.equal(ready.spec.networkReady, false);
    assert.equal(ready.spec.runtimeName, "fake");
    assert.equal(ready.spec.socket, server.socket);
    assert.equal(ready.spec.lastError, "");
    assert.ok(ready.spec.lastAnswer > 0);

    server.conditions = [{ type: "RuntimeReady", status: false, reason: "Boom", message: "x" }];
    const down = await waitForResource(store, RUNTIME_STATUS, (r) => !r.spec.ready);
    assert.equal(down.spec.lastError, "RuntimeReady is false: Boom: x");

    server.conditions = [{ type: "RuntimeReady", status: true, reason: "", message: "" }];
    await waitForResource(store, RUNTIME_STATUS, (r) => r.spec.ready);
    store.modify(ptr, "test", () => status("backing-off"));
    const stopped = await waitForResource(store, RUNTIME_STATUS, (r) => !r.spec.ready);
    assert.equal(stopped.spec.lastError, "containerd is backing-off");
    assert.equal(stopped.spec.runtimeName, "fake");
  } finally {
    await runtime.stop();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
