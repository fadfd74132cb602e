import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { outcome, startApiFixture } from "../testing.ts";

Deno.test("Containers and Images list containerd's CRI through the API (reader)", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const r = await c.api.containers({});
    equal(r.socket, f.cri.socket);
    deepEqual(r.pods.map((p) => [p.id, p.name, p.namespace, p.state]), [
      ["p1", "web", "default", "ready"],
    ]);
    deepEqual(r.containers.map((x) => [x.id, x.podId, x.name, x.state, x.image]), [
      ["c1", "p1", "web", "running", "docker.io/library/nginx:1"],
      ["c2", "p1", "sidecar", "exited", "docker.io/library/busybox:1"],
    ]);
    equal(timestampDate(r.containers[0].created!).getTime(), 1_700_000_000_500);
    const i = await c.api.images({});
    deepEqual(i.images.map((x) => [x.id, x.tags, Number(x.sizeBytes)]), [
      ["sha256:aa", ["docker.io/library/nginx:1"], 73_000_000],
    ]);
    equal(f.cri.calls.ListPodSandbox, 1);
    equal(f.cri.calls.ListImages, 1);
  } finally {
    await f.close();
  }
});

Deno.test("Containers: a runtime that fails is Unavailable naming the socket; none is FailedPrecondition", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client();
    f.cri.failWith = Code.Internal;
    equal(await outcome(() => c.api.containers({})), "Unavailable");
    await rejects(() => c.api.containers({}), (e: Error) => e.message.includes(f.cri.socket));
    f.store.destroy({ type: "RuntimeStatus", namespace: "runtime", id: "containerd" }, "test");
    equal(await outcome(() => c.api.images({})), "FailedPrecondition");
  } finally {
    await f.close();
  }
});

Deno.test("Metrics counts API calls by method and code; ControllerGraph lists controllers", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    await c.api.version({});
    await c.api.get({ type: "ms", id: "nope" }).catch(() => {});
    const text = (await c.api.metrics({})).text;
    ok(text.includes('machined_api_requests_total{method="Version",code="OK"} 1'), text);
    ok(text.includes('machined_api_requests_total{method="Get",code="NotFound"} 1'), text);
    ok(text.includes("# TYPE machined_api_request_duration_seconds histogram"));
    const g = await c.api.controllerGraph({});
    deepEqual(g.controllers.map((n) => [n.name, n.inputs[0].type, n.outputs[0].kind]), [
      ["test.A", "MachineConfig", "exclusive"],
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("machined_api_streams_open counts a Watch while it is open, and not after it is cancelled", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client();
    const open = async () =>
      /machined_api_streams_open\{method="Watch"\} (\d+)/.exec(await f.registry.render())?.[1];
    const ac = new AbortController();
    const it = c.api.watch({ type: "ms" }, { signal: ac.signal })[Symbol.asyncIterator]();
    await it.next();
    equal(await open(), "1");
    ac.abort();
    await it.next().catch(() => {});
    const deadline = performance.now() + 5000;
    while ((await open()) !== "0" && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    equal(await open(), "0");
    ok((await f.registry.render()).includes('machined_api_requests_total{method="Watch",code='));
  } finally {
    await f.close();
  }
});
