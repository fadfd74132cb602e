import { deepEqual, equal, ok } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { fakeServiceSpec, startApiFixture } from "../testing.ts";
import { capArgv, OBSERVE_LIMITS } from "./observe_handlers.ts";

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

Deno.test("Processes over the API: argv and owner; no CPU share on the first call", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const first = await c.api.processes({});
    const payload = first.processes.find((p) => p.pid === 40)!;
    deepEqual(payload.args, ["/bin/payload", "--token=s3cret"]);
    equal(payload.owner, "payload");
    equal(payload.cpuPercent, undefined);
    equal(first.sampleIntervalMs, undefined);
  } finally {
    await f.close();
  }
});

Deno.test("Mounts over the API: source, target, type, options; size where measurable", async () => {
  const f = await startApiFixture();
  try {
    const r = await f.client().api.mounts({});
    deepEqual(r.mounts.map((m) => `${m.source} ${m.target} ${m.fstype}`), [
      "/dev/vda3 / ext4",
      "cgroup2 /sys/fs/cgroup cgroup2",
      "/dev/vda5 /var/lib/my data xfs",
    ]);
    equal(r.mounts[0].options, "rw,relatime,errors=remount-ro");
    equal(r.mounts[0].sizeBytes, 10n * 2n ** 30n);
    equal(r.mounts[1].sizeBytes, undefined, "a mount statvfs refuses is listed without a size");
  } finally {
    await f.close();
  }
});

Deno.test("Cgroups over the API: machined's and each service's counters", async () => {
  const f = await startApiFixture();
  try {
    const r = await f.client().api.cgroups({});
    deepEqual(r.cgroups.map((c) => `${c.owner}=${c.path}`), [
      "containerd=machined/containerd",
      "machined=machined.slice",
      "payload=machined/payload",
    ]);
    const payload = r.cgroups.find((c) => c.owner === "payload")!;
    equal(payload.memoryMaxBytes, 268435456n);
    equal(payload.memoryEvents.oom_kill, 1n);
    equal(payload.pidsMax, 64n);
    equal(r.cgroups[0].memoryMaxBytes, undefined, "max is no limit");
  } finally {
    await f.close();
  }
});

Deno.test("Netstat over the API: sockets with the process holding each", async () => {
  const f = await startApiFixture();
  try {
    const r = await f.client().api.netstat({});
    const rows = r.sockets.map((s) =>
      `${s.protocol} ${s.localAddress}:${s.localPort} ${s.remoteAddress}:${s.remotePort} ${s.state} ${s.pid} ${s.owner}`
    );
    deepEqual(rows, [
      "tcp 0.0.0.0:50000 0.0.0.0:0 LISTEN 20 apid",
      "tcp 127.0.0.1:50000 127.0.0.2:40000 ESTABLISHED 20 apid",
      "tcp6 ::1:80 :::0 LISTEN 40 payload",
      "udp 0.0.0.0:68 0.0.0.0:0 CLOSE 0 ",
    ]);
  } finally {
    await f.close();
  }
});

Deno.test("Processes: a service env value on a command line is hidden from readers only", async () => {
  const f = await startApiFixture();
  try {
    f.services.add("web", { ...fakeServiceSpec(["/bin/web"]), env: { TOKEN: "s3cret" } });
    const args = async (role: "os:reader" | "os:operator") =>
      (await f.client(f.pki.clients[role]).api.processes({})).processes.find((p) => p.pid === 40)!
        .args;
    deepEqual(await args("os:reader"), ["/bin/payload", "--token=(redacted)"]);
    deepEqual(await args("os:operator"), ["/bin/payload", "--token=s3cret"]);
  } finally {
    await f.close();
  }
});

Deno.test("Processes and Netstat stay under the message limit: argv cut, the rest counted", async () => {
  deepEqual(capArgv(["ab", "cdef", "gh"], 4), ["ab", "cd..."]);
  deepEqual(capArgv(["ab"], 4), ["ab"]);
  const f = await startApiFixture();
  try {
    f.proc.addProcess({ pid: 500, argv: ["/bin/long", "x".repeat(5000)] });
    for (let pid = 1000; pid < 1000 + OBSERVE_LIMITS.processes; pid++) f.proc.addProcess({ pid });
    const r = await f.client().api.processes({});
    equal(r.processes.length, OBSERVE_LIMITS.processes);
    equal(r.omitted, 8, "the 8 highest pids are left out");
    const long = r.processes.find((p) => p.pid === 500)!;
    equal(long.args.join("").length, OBSERVE_LIMITS.argvBytes + 3);
  } finally {
    await f.close();
  }
});
