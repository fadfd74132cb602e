import { deepEqual, throws } from "node:assert/strict";
import { clone, create } from "@bufbuild/protobuf";
import { LabelOp, LabelTermSchema } from "../gen/machined/v1/machine_pb.ts";
import { ResourceSchema } from "../gen/machined/v1/resources_pb.ts";
import { Store } from "../../runtime/mod.ts";
import type { MachineResource, ResourceSpecs } from "../../resources/mod.ts";
import { parseLabelSelector } from "../../runtime/mod.ts";
import {
  fromProtoResource,
  ResourceMappingError,
  selectorFromProto,
  selectorToProto,
  toProtoResource,
  watchEventFromProto,
  watchEventToProto,
} from "./mod.ts";

function sampleStore() {
  const store = new Store<ResourceSpecs>();
  store.create({
    type: "MachineConfig",
    namespace: "config",
    id: "v1alpha1",
    owner: "config",
    spec: {
      source: "/etc/machined.yaml",
      config: {
        version: "v1alpha1",
        machine: { hostname: "node-1" },
      } as unknown as ResourceSpecs["MachineConfig"]["config"],
    },
  });
  store.create({
    type: "ConfigStatus",
    namespace: "config",
    id: "machine",
    owner: "config",
    labels: { a: "b" },
    finalizers: ["x"],
    spec: {
      state: "invalid",
      source: "api",
      errors: [{ path: "machine.hostname", line: 3, column: 5, message: "bad", hint: "fix it" }, {
        path: "x",
        line: 1,
        column: 1,
        message: "no hint",
      }],
    },
  });
  store.create({
    type: "MachineStatus",
    namespace: "runtime",
    id: "machine",
    owner: "m",
    spec: {
      stage: "maintenance",
      ready: false,
      unmetConditions: [{ name: "config", reason: "missing" }],
      pid1: true,
      mode: "node",
    },
  });
  store.create({
    type: "ControllerStatus",
    namespace: "runtime",
    id: "c",
    owner: "m",
    spec: {
      state: "backoff",
      reconciles: 12,
      failures: 2,
      consecutiveFailures: 1,
      lastError: "boom",
      lastReconcile: "2026-01-01T00:00:00.000Z",
      lastDurationMs: 0.25,
      inputs: ["A"],
      outputs: ["B"],
    },
  });
  const net = (type: string, id: string, spec: unknown) =>
    store.create({
      type: type as "LinkSpec",
      namespace: "network",
      id,
      owner: "n",
      spec: spec as never,
    });
  net("LinkSpec", "eth0", { name: "eth0", up: true, mtu: 9000, dhcp: true, origin: "config" });
  net("LinkSpec", "lo", { name: "lo", up: true, dhcp: false, origin: "default" });
  net("RouteSpec", "r", {
    link: "eth0",
    family: "inet6",
    dst: "::",
    dstLen: 0,
    metric: 1024,
    origin: "dhcp",
  });
  net("DhcpLease", "eth0", {
    link: "eth0",
    state: "bound",
    address: "10.0.0.5",
    prefixLen: 24,
    routers: ["10.0.0.1"],
    dnsServers: [],
    leaseSeconds: 3600,
  });
  net("AddressStatus", "a", {
    link: "eth0",
    linkIndex: 2,
    family: "inet",
    address: "10.0.0.5",
    prefixLen: 24,
    scope: "global",
    flags: 128,
  });
  net("ServiceSpec", "containerd", {
    command: ["/bin/containerd"],
    env: { A: "1" },
    cwd: "/",
    user: 0,
    group: "root",
    dependsOn: [],
    restart: "on-failure",
    stopGraceMs: 1000,
    onDependencyRestart: "hold",
    health: {
      probe: { kind: "cri", socket: "/run/c.sock" },
      intervalMs: 1,
      timeoutMs: 2,
      startPeriodMs: 3,
      successThreshold: 1,
      failureThreshold: 3,
      restartWhenUnhealthy: true,
    },
    limits: { memoryMax: 1 << 30, pidsMax: 100 },
    files: [{ path: "/etc/x", content: "y" }, { path: "/etc/z", content: "", mode: 0o600 }],
    dirs: ["/var/lib/x"],
    builtin: true,
  });
  net("ServiceSpec", "payload", {
    command: ["/bin/p"],
    env: {},
    cwd: "/",
    user: "nobody",
    group: 65534,
    dependsOn: ["containerd"],
    restart: "always",
    stopGraceMs: 1000,
    onDependencyRestart: "restart",
    limits: {},
    files: [],
    dirs: [],
    builtin: false,
  });
  net("ServiceStatus", "containerd", {
    state: "backing-off",
    healthy: false,
    restarts: 2,
    pid: null,
    lastExit: { code: null, signal: "SIGKILL", time: 5, killedAfterGrace: true },
    message: "m",
    since: 7,
  });
  net("ServiceStatus", "payload", {
    state: "running",
    healthy: true,
    restarts: 0,
    pid: 42,
    lastExit: null,
    message: "",
    since: 1,
  });
  net("RuntimeStatus", "containerd", {
    ready: true,
    networkReady: false,
    runtimeName: "containerd",
    runtimeVersion: "2",
    runtimeApiVersion: "v1",
    socket: "/run/c.sock",
    lastError: "",
    lastProbe: 1700000000000,
    lastAnswer: 1700000000000,
  });
  net("TimeStatus", "node", {
    disabled: false,
    synced: true,
    server: "pool.ntp.org",
    address: "1.2.3.4",
    offsetMs: -1.5,
    delayMs: 3,
    stratum: 2,
    correction: "slew",
    lastSync: 1700000000000,
    syncCount: 4,
    nextSync: null,
    lastError: "",
  });
  net("TimeStatus", "fresh", {
    disabled: false,
    synced: false,
    server: "",
    address: "",
    offsetMs: null,
    delayMs: null,
    stratum: null,
    correction: null,
    lastSync: null,
    syncCount: 0,
    nextSync: 5,
    lastError: "",
  });
  net("KernelParamStatus", "k", {
    key: "net.ipv4.ip_forward",
    desired: "1",
    current: null,
    default: "0",
    applied: false,
    error: "x",
  });
  net("KernelModuleStatus", "m", {
    name: "br_netfilter",
    state: "already-loaded",
    parameters: [],
    dependencies: ["bridge"],
    loadedDependencies: [],
    configured: true,
    error: "",
    message: "",
  });
  net("ResolverStatus", "r", { nameservers: ["1.1.1.1"], search: [], path: "/etc/resolv.conf" });
  return store;
}

function all(store: Store<ResourceSpecs>): MachineResource[] {
  return [
    ...store.list("MachineConfig"),
    ...store.list("ConfigStatus"),
    ...store.list("MachineStatus"),
    ...store.list("ControllerStatus"),
    ...store.list("LinkSpec"),
    ...store.list("RouteSpec"),
    ...store.list("DhcpLease"),
    ...store.list("AddressStatus"),
    ...store.list("ResolverStatus"),
    ...store.list("ServiceSpec"),
    ...store.list("ServiceStatus"),
    ...store.list("RuntimeStatus"),
    ...store.list("TimeStatus"),
    ...store.list("KernelParamStatus"),
    ...store.list("KernelModuleStatus"),
  ];
}

Deno.test("every resource type round-trips through its proto message", () => {
  for (const r of all(sampleStore())) {
    deepEqual(fromProtoResource(toProtoResource(r)), JSON.parse(JSON.stringify(r), revive));
  }
});

function revive(key: string, value: unknown) {
  return (key === "created" || key === "updated") ? new Date(value as string) : value;
}

Deno.test("fromProtoResource rejects a spec that does not match metadata.type", () => {
  const store = sampleStore();
  // Converted messages are cached and shared: mutate a copy.
  const msg = clone(
    ResourceSchema,
    toProtoResource(store.get("MachineStatus", "runtime", "machine")),
  );
  msg.metadata!.type = "ControllerStatus";
  throws(() => fromProtoResource(msg), ResourceMappingError);
  throws(
    () => fromProtoResource(create(ResourceSchema, { metadata: msg.metadata })),
    ResourceMappingError,
  );
  throws(() => fromProtoResource(create(ResourceSchema, {})), ResourceMappingError);
});

Deno.test("label selectors round-trip, malformed terms are rejected", () => {
  const selector = parseLabelSelector("a=b,c!=d,e,!f,g in (x|y)");
  deepEqual(selectorFromProto(selectorToProto(selector)), selector);
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "a", op: LabelOp.EQUAL })]),
    ResourceMappingError,
  );
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "a" })]),
    ResourceMappingError,
  );
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "", op: LabelOp.EXISTS })]),
    ResourceMappingError,
  );
});

Deno.test("watch events round-trip", async () => {
  const store = sampleStore();
  const watch = store.watch("MachineStatus");
  const seen = [];
  for (;;) {
    const e = (await watch.next()).value!;
    seen.push(e);
    if (e.kind === "bootstrapped") break;
  }
  await store.modify(
    { type: "MachineStatus", namespace: "runtime", id: "machine" },
    "m",
    (s) => ({ ...s!, ready: true }),
  );
  seen.push((await watch.next()).value!);
  watch.close();
  seen.push({ kind: "overflow" as const, dropped: 7 });
  for (const e of seen) {
    deepEqual(
      JSON.stringify(watchEventFromProto(watchEventToProto(e as never))),
      JSON.stringify(e),
    );
  }
});
