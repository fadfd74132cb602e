/**
 * The service, log, kernel log and config RPCs through the real apid and
 * machined-side server, with fakes behind the node interfaces.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApplyConfigurationResponseSchema, LogStream } from "../gen/machined/v1/machine_pb.ts";
import { ConfigState } from "../gen/machined/v1/resources_pb.ts";
import { ServiceState } from "../gen/machined/v1/services_pb.ts";
import { kernelLogFromProto, serviceInfoFromProto } from "../mapping/mod.ts";
import { outcome, startApiFixture, withTimeout } from "../testing.ts";

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const m of stream) out.push(m);
  return out;
}

async function rejection(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (e) {
    if (e instanceof ConnectError) return e;
    throw e;
  }
  throw new Error("the call succeeded");
}

Deno.test("services: list, stop, start, restart; unknown ids are NotFound", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:operator"]).api;
    const list = await c.serviceList({});
    deepEqual(list.services.map((s) => s.id), ["containerd", "payload"]);
    const payload = serviceInfoFromProto(list.services[1]);
    deepEqual(payload.spec.dependsOn, ["containerd"]);
    equal(payload.status.restarts, 2);

    const stopped = await c.serviceStop({ id: "payload" });
    equal(stopped.service?.status?.state, ServiceState.FINISHED);
    equal(stopped.service?.status?.pid, undefined);
    const started = await c.serviceStart({ id: "payload" });
    equal(started.service?.status?.state, ServiceState.RUNNING);
    ok(started.service?.status?.pid);
    const restarted = await c.serviceRestart({ id: "payload" });
    equal(restarted.service?.status?.restarts, 3);
    deepEqual(f.services.calls, ["stop payload", "start payload", "restart payload"]);

    for (const call of [c.serviceStart, c.serviceStop, c.serviceRestart]) {
      const e = await rejection(() => call({ id: "nope" }));
      equal(e.code, Code.NotFound);
      match(e.rawMessage, /No service "nope"/);
      equal((await rejection(() => call({ id: "" }))).code, Code.InvalidArgument);
    }
  } finally {
    await f.close();
  }
});

Deno.test("logs: tail, whole backlog, unknown id", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]).api;
    for (let i = 1; i <= 5; i++) f.logs.push("payload", `line ${i}`, i === 3 ? "stderr" : "stdout");
    const tail = await collect(c.logs({ id: "payload", tail: 2 }));
    deepEqual(tail.map((l) => l.text), ["line 4", "line 5"]);
    deepEqual(tail.map((l) => Number(l.seq)), [4, 5]);
    ok(tail[0].time && tail[1].time && tail[1].time.seconds > tail[0].time.seconds);
    const all = await collect(c.logs({ id: "payload" }));
    equal(all.length, 5);
    equal(all[2].stream, LogStream.STDERR);
    equal((await collect(c.logs({ id: "payload", tail: 0 }))).length, 0);
    const e = await rejection(() => collect(c.logs({ id: "nope" })));
    equal(e.code, Code.NotFound);
    match(e.rawMessage, /No log for "nope"/);
    equal(f.logs.readers, 0);
  } finally {
    await f.close();
  }
});

Deno.test("service ids with control characters are refused at the door (InvalidArgument), never looked up", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:operator"]).api;
    const bad = [
      "pay\x1b]0;pwned\x07\x1b[2J",
      "payload\n[info] audit: forged",
      "pay\rload",
      "p\u009b2J",
      "pay\u202eload",
      "Payload",
    ];
    const calls = {
      ServiceStart: (id: string) => c.serviceStart({ id }),
      ServiceStop: (id: string) => c.serviceStop({ id }),
      ServiceRestart: (id: string) => c.serviceRestart({ id }),
      Logs: (id: string) => collect(c.logs({ id })),
    };
    for (const [rpc, call] of Object.entries(calls)) {
      for (const id of bad) {
        const e = await rejection(() => call(id));
        equal(e.code, Code.InvalidArgument, `${rpc} ${JSON.stringify(id)}`);
        match(e.rawMessage, new RegExp(`^${rpc}: invalid id .*a service id is 1 to 63 lowercase`));
      }
    }
    deepEqual(f.services.calls, [], "nothing was started, stopped or restarted");
  } finally {
    await f.close();
  }
});

Deno.test("logs: follow streams new lines; cancelling releases the follower", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]).api;
    f.logs.push("machined", "booted", "log");
    const ac = new AbortController();
    const it = c.logs({ id: "machined", tail: 1, follow: true }, { signal: ac.signal })
      [Symbol.asyncIterator]();
    const next = async () => (await withTimeout(it.next(), 5000, "log line")).value!;
    equal((await next()).text, "booted");
    await withTimeout(f.logs.whenReaders(1), 5000, "follower registered");
    f.logs.push("machined", "config applied", "log");
    const line = await next();
    equal(line.text, "config applied");
    equal(line.stream, LogStream.LOG);
    ac.abort();
    await it.return?.().catch(() => {});
    // The cancel crosses apid and the socket; the fake signals the release.
    await withTimeout(f.logs.whenReaders(0), 5000, "follower released");
  } finally {
    await f.close();
  }
});

Deno.test("dmesg: whole buffer, tail, follow after the tail, gaps", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]).api;
    f.kernelLog.log("Linux version 6.1");
    f.kernelLog.lose();
    f.kernelLog.log("virtio_blk virtio1: [vda] 20971520 512-byte logical blocks", {
      level: 5,
      fields: { SUBSYSTEM: "virtio", DEVICE: "+virtio:virtio1" },
    });
    f.kernelLog.log("EXT4-fs (vda3): mounted filesystem");
    const all = (await collect(c.dmesg({}))).map(kernelLogFromProto);
    deepEqual(all.map((r) => r && ("lost" in r ? "(lost)" : r.text)), [
      "Linux version 6.1",
      "(lost)",
      "virtio_blk virtio1: [vda] 20971520 512-byte logical blocks",
      "EXT4-fs (vda3): mounted filesystem",
    ]);
    const virtio = all[2];
    ok(virtio && !("lost" in virtio));
    equal(virtio.level, 5);
    deepEqual(virtio.fields, { SUBSYSTEM: "virtio", DEVICE: "+virtio:virtio1" });

    const tail = (await collect(c.dmesg({ tail: 2 }))).map(kernelLogFromProto);
    deepEqual(tail.map((r) => r && !("lost" in r) && r.text), [
      "virtio_blk virtio1: [vda] 20971520 512-byte logical blocks",
      "EXT4-fs (vda3): mounted filesystem",
    ]);

    const ac = new AbortController();
    const it = c.dmesg({ tail: 1, follow: true }, { signal: ac.signal })[Symbol.asyncIterator]();
    const next = async () =>
      kernelLogFromProto((await withTimeout(it.next(), 5000, "kmsg")).value!);
    const first = await next();
    equal(first && !("lost" in first) && first.text, "EXT4-fs (vda3): mounted filesystem");
    // Logged while the follower may still be catching up: it must arrive once, after the tail.
    f.kernelLog.log("random: crng init done");
    const second = await next();
    equal(second && !("lost" in second) && second.text, "random: crng init done");
    ac.abort();
    await it.return?.().catch(() => {});
  } finally {
    await f.close();
  }
});

Deno.test("apply-config: valid applies, invalid is InvalidArgument with every error, dry run or not", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:admin"]).api;
    const good = "version: v1alpha1\nmachine:\n  hostname: node-7\n";
    const bad = "version: v1alpha1\nmachine:\n  hostnme: a\n  sysctls: 3\n";

    const applied = await c.applyConfiguration({ configYaml: good });
    equal(applied.state, ConfigState.VALID);
    equal(applied.applied, true);
    deepEqual(f.configs.applied, [{ text: good, by: "admin/os:admin" }]);

    const e = await rejection(() => c.applyConfiguration({ configYaml: bad }));
    equal(e.code, Code.InvalidArgument);
    const lines = e.rawMessage.split("\n");
    match(lines[0], /Machine config is invalid \(2 errors\); nothing was changed/);
    match(lines[1], /^3:3: machine\.hostnme: .*\(did you mean "hostname"/);
    match(lines[2], /^4:\d+: machine\.sysctls: /);
    // The structured errors survive both hops as a detail.
    const [detail] = e.findDetails(ApplyConfigurationResponseSchema);
    deepEqual(detail.errors.map((x) => `${x.line}:${x.path}`), [
      "3:machine.hostnme",
      "4:machine.sysctls",
    ]);
    equal(f.configs.applied.length, 1);

    // A dry run of an invalid config is refused exactly as the apply: code, message, detail.
    const dryBad = await rejection(() => c.applyConfiguration({ configYaml: bad, dryRun: true }));
    equal(dryBad.code, Code.InvalidArgument);
    equal(dryBad.rawMessage, e.rawMessage);
    deepEqual(dryBad.findDetails(ApplyConfigurationResponseSchema)[0].errors, detail.errors);
    equal(detail.errors[0].hint !== undefined, true);
    const dryGood = await c.applyConfiguration({ configYaml: good, dryRun: true });
    equal(dryGood.state, ConfigState.VALID);
    equal(dryGood.applied, false);
    deepEqual(f.configs.dryRuns, [good]);
    equal(f.configs.applied.length, 1);

    equal(
      (await rejection(() => c.applyConfiguration({ configYaml: "  \n" }))).code,
      Code.InvalidArgument,
    );
  } finally {
    await f.close();
  }
});

Deno.test("without a supervisor, kernel log or applier the RPCs are Unimplemented, saying what is missing", async () => {
  const f = await startApiFixture({ nodeServices: false });
  try {
    const c = f.client().api;
    const got = {
      serviceList: await outcome(() => c.serviceList({})),
      serviceRestart: await outcome(() => c.serviceRestart({ id: "payload" })),
      logs: await outcome(() => collect(c.logs({ id: "machined" }))),
      dmesg: await outcome(() => collect(c.dmesg({}))),
      applyConfiguration: await outcome(() => c.applyConfiguration({ configYaml: "x: 1" })),
    };
    for (const [rpc, code] of Object.entries(got)) equal(code, "Unimplemented", rpc);
    const e = await rejection(() => c.serviceList({}));
    match(
      e.rawMessage,
      /service RPCs are not available: this machined runs without a service supervisor/,
    );
    match((await rejection(() => collect(c.dmesg({})))).rawMessage, /kernel log reader/);
  } finally {
    await f.close();
  }
});
