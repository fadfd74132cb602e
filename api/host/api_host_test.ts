/**
 * The API host as machined wires it (apid, machined-edge, is a fake process here):
 * over the internal socket, as apid would call it, GenerateClientConfiguration
 * without endpoints names the node's addresses, mutating calls land in
 * machined's own log with the caller, and Version shows the live hostname.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { connectUnixStream } from "../../platform/unix_stream/mod.ts";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MachineService, Role as ProtoRole } from "../gen/machined/v1/machine_pb.ts";
import { identityToHeaders } from "../auth/mod.ts";
import { createTestPki, RecordingActions } from "../testing.ts";
import { FakeProcessBackend, type ProcessSpec } from "../../platform/process/mod.ts";
import { FakeCgroupBackend } from "../../platform/cgroup/mod.ts";
import { edgeBinaryPath } from "../edge/mod.ts";
import { parseClientConfig } from "../../pki/mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { Machined } from "../../core/mod.ts";
import { startApiHost } from "./api_host.ts";

Deno.test("the API host issues configs for the node's addresses and audits mutating calls", async () => {
  const pki = await createTestPki();
  const machined = new Machined({
    mode: "dev",
    pid1: false,
    logger: createLogger({ console: false }),
  });
  const backend = new FakeProcessBackend().define(
    edgeBinaryPath(),
    (p) => p.writeLine("stdout", JSON.stringify({ apid: "ready", port: 50000 })),
  );
  const host = await startApiHost({
    machined,
    pki: { dir: pki.dir, ca: pki.ca, server: pki.server, written: [] },
    pkiDir: pki.dir,
    runDir: join(pki.dir, "run"),
    listen: "0.0.0.0:50000",
    processBackend: backend,
    actions: new RecordingActions(),
    endpoints: () => ["127.0.0.1:50000"],
    dropUser: false,
  });
  const transport = createGrpcTransport({
    baseUrl: "http://machined",
    nodeOptions: { createConnection: () => connectUnixStream(host.internal.socketPath) },
  });
  const api = createClient(MachineService, transport);
  const headers = new Headers();
  identityToHeaders({ name: "alice", role: "os:admin", serialNumber: "5eed" }, headers);
  const endpoints = async () => {
    const r = await api.generateClientConfiguration({ role: ProtoRole.READER, name: "r" }, {
      headers,
    });
    const c = parseClientConfig(r.configYaml);
    return c.contexts[c.context!].endpoints;
  };
  try {
    await host.ready();
    deepEqual(await endpoints(), ["127.0.0.1:50000"], "no address yet: the fallback");
    machined.store.create({
      type: "AddressStatus",
      namespace: "network",
      id: "eth0/10.0.2.15/24",
      owner: "test",
      spec: {
        link: "eth0",
        linkIndex: 2,
        family: "inet",
        address: "10.0.2.15",
        prefixLen: 24,
        scope: "global",
        flags: 0,
      },
    });
    deepEqual(await endpoints(), ["10.0.2.15:50000"]);

    const audit = machined.logger.ring.tail(100).map((l) => l.text).filter((t) =>
      t.includes(" audit: ")
    );
    equal(audit.length, 2);
    ok(
      audit.every((t) =>
        t.startsWith("[info] audit: GenerateClientConfiguration cn=alice role=os:admin serial=5eed")
      ),
      audit.join("\n"),
    );

    equal((await api.version({}, { headers })).hostname, "test-node");
    machined.store.create({
      type: "HostnameStatus",
      namespace: "network",
      id: "hostname",
      owner: "test",
      spec: { hostname: "node-7", domainname: "", fqdn: "node-7" },
    });
    equal((await api.version({}, { headers })).hostname, "node-7");
  } finally {
    await host.stop();
    await machined.stop();
    await Deno.remove(pki.dir, { recursive: true });
  }
});

Deno.test("the API host runs machined-edge with the config's limits, in the cgroup it asks for", async () => {
  const pki = await createTestPki();
  const machined = new Machined({
    mode: "dev",
    pid1: false,
    logger: createLogger({ console: false }),
  });
  const seen: ProcessSpec[] = [];
  const cgroups = new FakeCgroupBackend("/sys/fs/cgroup/system");
  const backend = new FakeProcessBackend().define("/machined/bin/machined-edge", (p) => {
    seen.push(p.spec);
    p.writeLine("stdout", JSON.stringify({ apid: "ready", impl: "machined-edge", port: 50000 }));
  });
  const host = await startApiHost({
    machined,
    pki: { dir: pki.dir, ca: pki.ca, server: pki.server, written: [] },
    pkiDir: pki.dir,
    runDir: join(pki.dir, "run"),
    listen: "0.0.0.0:50000",
    api: { max_message_bytes: 65536, max_concurrent_streams: 7 },
    processBackend: backend,
    actions: new RecordingActions(),
    endpoints: () => ["127.0.0.1:50000"],
    dropUser: false,
    edgeBinary: "/machined/bin/machined-edge",
    cgroup: { backend: cgroups, name: "apid", limits: { memoryMax: 64 << 20 } },
  });
  try {
    equal((await host.ready()).port, 50000);
    const argv = seen[0].argv;
    equal(seen[0].cgroup, "/sys/fs/cgroup/system/apid");
    deepEqual(await cgroups.read("apid"), { memoryMax: 64 << 20 });
    equal(argv[0], "/machined/bin/machined-edge");
    ok(argv.includes(`--pki-dir=${pki.dir}`), argv.join(" "));
    ok(argv.includes("--max-concurrent-streams=7"), argv.join(" "));
    ok(argv.includes("--read-max-bytes=65536"), argv.join(" "));
  } finally {
    await host.stop();
    await Deno.remove(pki.dir, { recursive: true });
  }
});

Deno.test("a cgroup that cannot be made is logged and the edge runs anyway", async () => {
  const pki = await createTestPki();
  const machined = new Machined({
    mode: "dev",
    pid1: false,
    logger: createLogger({ console: false }),
  });
  const cgroups = new FakeCgroupBackend("/sys/fs/cgroup/system");
  cgroups.faults.failAlways("prepare", new Error("no memory controller"));
  const seen: ProcessSpec[] = [];
  const backend = new FakeProcessBackend().define("/e", (p) => {
    seen.push(p.spec);
    p.writeLine("stdout", JSON.stringify({ apid: "ready", port: 50000 }));
  });
  const host = await startApiHost({
    machined,
    pki: { dir: pki.dir, ca: pki.ca, server: pki.server, written: [] },
    pkiDir: pki.dir,
    runDir: join(pki.dir, "run"),
    listen: "0.0.0.0:50000",
    processBackend: backend,
    actions: new RecordingActions(),
    endpoints: () => [],
    dropUser: false,
    edgeBinary: "/e",
    cgroup: { backend: cgroups, name: "apid", limits: { memoryMax: 1 } },
  });
  try {
    await host.ready();
    equal(seen[0].cgroup, undefined);
    ok(machined.logger.ring.tail(50).some((l) => l.text.includes("cannot make its cgroup")));
  } finally {
    await host.stop();
    await Deno.remove(pki.dir, { recursive: true });
  }
});
