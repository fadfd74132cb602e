import { deepEqual, equal, ok } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { startApiFixture } from "../testing.ts";

Deno.test("Memory over the API: meminfo and each component's processes, for a reader", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const r = await c.api.memory({});
    equal(r.meminfo?.totalBytes, 2000000n * 1024n);
    equal(r.meminfo?.fields.MemAvailable, 1500000n * 1024n);
    deepEqual(r.owners.map((o) => o.owner), ["apid", "containerd", "machined", "payload"]);
    const payload = r.processes.find((p) => p.owner === "payload");
    equal(payload?.command, "payload");
    equal(payload?.pssBytes, undefined);
  } finally {
    await f.close();
  }
});

Deno.test("Stats over the API: load, CPUs, disks and links", async () => {
  const f = await startApiFixture();
  try {
    const r = await f.client().api.stats({});
    equal(r.load?.load1, 0.5);
    equal(r.cpus.length, 2);
    equal(r.cpuTotal?.cpu, "cpu");
    equal(r.disks[0].device, "vda");
    deepEqual(r.links.map((l) => l.link), ["lo", "eth0"]);
    equal(r.sampleIntervalMs, undefined);
  } finally {
    await f.close();
  }
});

Deno.test("Stats when /proc cannot be read answers Unavailable with the path", async () => {
  const f = await startApiFixture();
  try {
    f.proc.remove("stat");
    const e = await f.client().api.stats({}).catch((e) => e);
    ok(e instanceof ConnectError);
    equal(e.code, Code.Unavailable);
    ok(e.rawMessage.includes("/proc/stat"), e.rawMessage);
  } finally {
    await f.close();
  }
});

Deno.test("Memory without an observer answers Unimplemented", async () => {
  const f = await startApiFixture({ nodeServices: false });
  try {
    const e = await f.client().api.memory({}).catch((e) => e);
    equal(e.code, Code.Unimplemented);
  } finally {
    await f.close();
  }
});
