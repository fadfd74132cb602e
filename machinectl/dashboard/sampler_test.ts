import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { createMachineClient } from "../../api/client/mod.ts";
import { createTestPki, startApiFixture, withTimeout } from "../../api/testing.ts";
import { create } from "@bufbuild/protobuf";
import { MemoryResponseSchema, StatsResponseSchema } from "../../api/gen/machined/v1/machine_pb.ts";
import { createSampler, sampleOf } from "./sampler.ts";
import type { DashboardAction } from "./state.ts";

/** Runs the sampler until `count` actions came, then stops it; returns them. */
async function sampleActions(fixtureOptions: Parameters<typeof startApiFixture>[0], count: number) {
  const f = await startApiFixture(fixtureOptions);
  const abort = new AbortController();
  const actions: DashboardAction[] = [];
  let enough!: () => void;
  const got = new Promise<void>((r) => (enough = r));
  try {
    const c = f.client();
    const run = createSampler((a) => {
      actions.push(a);
      if (actions.length === count) enough();
    }, 10)(c.api, abort.signal).catch((e) => e);
    await withTimeout(got, 10_000, `${count} sampler actions`);
    abort.abort();
    const end = await withTimeout(run, 5_000, "the sampler ends on abort");
    match(String(end), /sampling stopped|abort/i);
    return actions;
  } finally {
    abort.abort();
    await f.close();
  }
}

Deno.test("sampler: Stats and Memory become one sample (the first without a CPU share)", async () => {
  const [first] = await sampleActions({}, 1);
  deepEqual(first, {
    type: "sample",
    sample: {
      cpu: null,
      cores: 2,
      perCore: [],
      load1: 0.5,
      memUsedBytes: 500_000 * 1024,
      memTotalBytes: 2_000_000 * 1024,
    },
  });
});

Deno.test("sampler: a node without Stats is shown as the reason and polling goes on", async () => {
  const actions = await sampleActions({ nodeServices: false }, 2);
  equal(actions.length, 2);
  for (const a of actions) {
    equal(a.type, "sampleError");
    match((a as { error: string }).error, /Unimplemented/);
  }
});

Deno.test("sampler: a node that is gone ends the session", async () => {
  const f = await startApiFixture();
  const c = f.client();
  await f.close();
  await rejects(
    withTimeout(createSampler(() => {}, 10)(c.api, new AbortController().signal), 10_000, "fail"),
    /ECONNREFUSED|unavailable|refused/i,
  );
});

Deno.test("sampler: a node that accepts but never answers ends the session after the poll timeout", async () => {
  const pki = await createTestPki();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) held.push(c);
  })().catch(() => {});
  const { port } = listener.addr as Deno.NetAddr;
  const c = createMachineClient({
    endpoint: `127.0.0.1:${port}`,
    caPem: pki.ca.certPem,
    certPem: pki.clients["os:reader"].certPem,
    keyPem: pki.clients["os:reader"].keyPem,
  });
  try {
    const t0 = performance.now();
    const e = await createSampler(() => {}, 10, 300)(c.api, new AbortController().signal)
      .catch((e) => e);
    const ms = performance.now() - t0;
    equal(e instanceof ConnectError && e.code, Code.DeadlineExceeded, String(e));
    ok(ms < 5_000, `ended after ${ms.toFixed(0)} ms`);
  } finally {
    c.close();
    listener.close();
    await accepting;
    for (const h of held) h.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
});

Deno.test("sampleOf: CPU shares in total and per core once the node has an earlier sample", () => {
  const stats = create(StatsResponseSchema, {
    load: { load1: 1.5 },
    cpuTotal: { cpu: "cpu", usagePercent: 40 },
    cpus: [{ cpu: "cpu0", usagePercent: 80 }, { cpu: "cpu1", usagePercent: 0 }],
  });
  const memory = create(MemoryResponseSchema, {
    meminfo: { totalBytes: 4096n, availableBytes: 1024n },
  });
  deepEqual(sampleOf(stats, memory), {
    cpu: 0.4,
    cores: 2,
    perCore: [0.8, 0],
    load1: 1.5,
    memUsedBytes: 3072,
    memTotalBytes: 4096,
  });
});
