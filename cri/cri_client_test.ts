import assert from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import { createCriClient, CriError } from "./cri_client.ts";
import { SAMPLE_LISTING, startFakeCriServer } from "./fake_cri_server.ts";

async function withServer(
  fn: (s: Awaited<ReturnType<typeof startFakeCriServer>>, dir: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "cri-test-" });
  const server = await startFakeCriServer(`${dir}/cri.sock`);
  try {
    await fn(server, dir);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("CRI client reads Version and Status over a Unix socket", async () => {
  await withServer(async (server) => {
    const client = createCriClient(server.socket);
    try {
      assert.deepEqual(await client.version(), {
        runtimeName: "fake",
        runtimeVersion: "0.0.1",
        runtimeApiVersion: "v1",
      });
      server.conditions = [
        { type: "RuntimeReady", status: true, reason: "", message: "" },
        { type: "NetworkReady", status: false, reason: "NetworkPluginNotReady", message: "cni" },
      ];
      const conditions = await client.status();
      assert.equal(conditions.length, 2);
      assert.deepEqual(conditions[1], {
        type: "NetworkReady",
        status: false,
        reason: "NetworkPluginNotReady",
        message: "cni",
      });
      assert.equal(server.calls.Status, 1);
    } finally {
      client.close();
    }
  });
});

Deno.test("CRI client errors are typed and carry the gRPC cause", async () => {
  await withServer(async (server) => {
    const client = createCriClient(server.socket);
    try {
      server.failWith = Code.Unavailable;
      const err = await client.status().then(() => undefined, (e) => e);
      assert.ok(err instanceof CriError);
      assert.equal(err.method, "Status");
      assert.match(err.message, /injected failure/);
      server.failWith = undefined;
      assert.equal((await client.status())[0].type, "RuntimeReady");
    } finally {
      client.close();
    }
  });
});

Deno.test("CRI client gives up at its deadline when the runtime hangs", async () => {
  await withServer(async (server) => {
    const client = createCriClient(server.socket, { timeoutMs: 150 });
    try {
      server.hang = true;
      const started = performance.now();
      const err = await client.status().then(() => undefined, (e) => e);
      assert.ok(err instanceof CriError);
      assert.ok(performance.now() - started < 2000);
    } finally {
      client.close();
    }
  });
});

Deno.test("CRI client reports a missing socket and recovers when it appears", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cri-test-" });
  const client = createCriClient(`${dir}/cri.sock`);
  try {
    const err = await client.version().then(() => undefined, (e) => e);
    assert.ok(err instanceof CriError);
    const server = await startFakeCriServer(`${dir}/cri.sock`);
    try {
      assert.equal((await client.version()).runtimeName, "fake");
    } finally {
      await server.close();
    }
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CRI client lists pod sandboxes, containers (by id) and images", async () => {
  await withServer(async (server) => {
    Object.assign(server, structuredClone(SAMPLE_LISTING));
    const client = createCriClient(server.socket);
    try {
      assert.deepEqual(await client.listPods(), SAMPLE_LISTING.pods);
      const containers = await client.listContainers();
      assert.deepEqual(containers.map((c) => c.id), ["c1", "c2"]);
      assert.deepEqual(containers[0], SAMPLE_LISTING.containers[1]);
      assert.deepEqual(await client.listImages(), SAMPLE_LISTING.images);
      server.failWith = Code.Unavailable;
      await assert.rejects(
        () => client.listImages(),
        (e: unknown) => e instanceof CriError && e.method === "ListImages",
      );
    } finally {
      client.close();
    }
  });
});
