import { deepEqual } from "node:assert/strict";
import { Role as ProtoRole } from "../gen/machined/v1/machine_pb.ts";
import type { Role } from "../../pki/mod.ts";
import { outcome, seededStore, seedTimeServers, startApiFixture, withTimeout } from "../testing.ts";
import type { MachineMethod } from "../auth/mod.ts";
import type { MachineClient } from "../client/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { createTokenBucket } from "../server/mod.ts";

/**
 * Who may call what, written out by hand (docs/api.md's roles table), not
 * read from METHOD_ROLES: a change to the rule table fails this test.
 */
const EXPECTED: { [M in MachineMethod]: Record<Role, "ok" | "PermissionDenied"> } = {
  version: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  get: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  list: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  watch: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  events: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  reboot: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  shutdown: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  reset: { "os:admin": "ok", "os:operator": "PermissionDenied", "os:reader": "PermissionDenied" },
  upgrade: { "os:admin": "ok", "os:operator": "PermissionDenied", "os:reader": "PermissionDenied" },
  unlockVolume: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  rollback: {
    "os:admin": "ok",
    "os:operator": "PermissionDenied",
    "os:reader": "PermissionDenied",
  },
  generateClientConfiguration: {
    "os:admin": "ok",
    "os:operator": "PermissionDenied",
    "os:reader": "PermissionDenied",
  },
  serviceList: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  serviceStart: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  serviceStop: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  serviceRestart: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  logs: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  dmesg: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  applyConfiguration: {
    "os:admin": "ok",
    "os:operator": "PermissionDenied",
    "os:reader": "PermissionDenied",
  },
  memory: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  stats: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  processes: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  mounts: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  cgroups: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  time: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  netstat: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  // observability: containers, support, dependencies
  containers: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  images: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  imagePull: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  metrics: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  controllerGraph: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  fileList: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  fileRead: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  diskUsage: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  fileCopy: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
};

/**
 * Arguments that need more than their RPC's role (ARGUMENT_ROLES), by hand:
 * Time naming one of `machine.time.servers` (here `ntp.example`), or another host.
 */
const ARGUMENTS_EXPECTED: Record<string, Record<Role, "ok" | "PermissionDenied">> = {
  timeConfiguredServer: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  timeOtherServer: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  fileReaderRoot: { "os:admin": "ok", "os:operator": "ok", "os:reader": "ok" },
  filePrivilegedRoot: { "os:admin": "ok", "os:operator": "ok", "os:reader": "PermissionDenied" },
  // A dry run changes nothing but shows the config's diff: the apply's role, no less.
  applyConfigurationDryRun: {
    "os:admin": "ok",
    "os:operator": "PermissionDenied",
    "os:reader": "PermissionDenied",
  },
};

async function firstOf(stream: AsyncIterable<unknown>): Promise<unknown> {
  for await (const m of stream) return m;
}

/** One call of each RPC; streams read their first message, then cancel. */
function calls(
  c: MachineClient,
  events: EventBus,
): { [M in MachineMethod]: () => Promise<unknown> } {
  const first = async (stream: AsyncIterable<unknown>) => {
    for await (const m of stream) return m;
  };
  return {
    version: () => c.api.version({}),
    get: () => c.api.get({ type: "ms", id: "machine" }),
    list: () => c.api.list({ type: "controllers" }),
    watch: () => first(c.api.watch({ type: "ms" })),
    events: async () => {
      const ac = new AbortController();
      const it = c.api.events({}, { signal: ac.signal })[Symbol.asyncIterator]();
      const next = it.next();
      // Publish once this call's subscription exists (a refused call never subscribes).
      const published = events.whenSubscribers(1).then(() =>
        events.emit("task", "s", "done", "hi")
      );
      try {
        return await next;
      } finally {
        ac.abort();
        await Promise.race([published, new Promise((r) => setTimeout(r, 0))]);
      }
    },
    reboot: () => c.api.reboot({}),
    shutdown: () => c.api.shutdown({}),
    reset: () => c.api.reset({}),
    upgrade: () =>
      c.api.upgrade((async function* () {
        yield { stage: true, chunk: new TextEncoder().encode("bundle") };
      })()),
    rollback: () => c.api.rollback({ stage: true }),
    unlockVolume: () =>
      c.api.unlockVolume({ volume: "STATE", passphrase: new TextEncoder().encode("pass") }),
    generateClientConfiguration: () =>
      c.api.generateClientConfiguration({ role: ProtoRole.READER, name: "bob" }),
    serviceList: () => c.api.serviceList({}),
    serviceStart: () => c.api.serviceStart({ id: "payload" }),
    serviceStop: () => c.api.serviceStop({ id: "payload" }),
    serviceRestart: () => c.api.serviceRestart({ id: "payload" }),
    logs: () => first(c.api.logs({ id: "payload" })),
    dmesg: () => first(c.api.dmesg({})),
    applyConfiguration: () =>
      c.api.applyConfiguration({ configYaml: "version: v1alpha1\nmachine:\n  hostname: n\n" }),
    memory: () => c.api.memory({}),
    stats: () => c.api.stats({}),
    processes: () => c.api.processes({}),
    mounts: () => c.api.mounts({}),
    cgroups: () => c.api.cgroups({}),
    time: () => c.api.time({}),
    netstat: () => c.api.netstat({}),
    // observability: containers, support, dependencies
    containers: () => c.api.containers({}),
    images: () => c.api.images({}),
    imagePull: () => c.api.imagePull({ image: "registry.example/app:1" }),
    metrics: () => c.api.metrics({}),
    controllerGraph: () => c.api.controllerGraph({}),
    fileList: () => first(c.api.fileList({ path: "/var/log" })),
    fileRead: () => first(c.api.fileRead({ path: "/var/log/machined.log" })),
    diskUsage: () => first(c.api.diskUsage({ path: "/var/log" })),
    fileCopy: () => first(c.api.fileCopy({ path: "/var/log" })),
  };
}

Deno.test("RBAC: every role × every RPC", async () => {
  const store = seededStore();
  seedTimeServers(store, ["ntp.example"]);
  const f = await startApiFixture({
    store,
    // Roles, not the rate, are under test here (time_rpc_test.ts covers the budget).
    timeBudget: createTokenBucket({ ratePerSecond: 1000, burst: 100 }),
    timeQuerier: {
      query: (host) =>
        Promise.resolve({
          server: host,
          address: "192.0.2.1",
          stratum: 2,
          offsetMs: 0,
          delayMs: 0,
        }),
    },
  });
  f.logs.push("payload", "hello");
  f.kernelLog.log("Linux version 6.1");
  f.cri.pullable.set("registry.example/app:1", {
    id: "sha256:app",
    tags: ["registry.example/app:1"],
    digests: [],
    sizeBytes: 1,
    pinned: false,
  });
  try {
    for (const role of ["os:admin", "os:operator", "os:reader"] as Role[]) {
      const c = f.client(f.pki.clients[role]);
      const table = calls(c, f.events);
      const got: Record<string, string> = {};
      const want: Record<string, string> = {};
      for (const method of Object.keys(table) as MachineMethod[]) {
        got[method] = await withTimeout(outcome(table[method]), 5000, `${role} ${method}`);
        want[method] = EXPECTED[method][role];
      }
      deepEqual(got, want, role);
      const args = {
        timeConfiguredServer: () => c.api.time({ server: "ntp.example" }),
        timeOtherServer: () => c.api.time({ server: "198.51.100.9" }),
        fileReaderRoot: () => firstOf(c.api.fileList({ path: "/system/state" })),
        filePrivilegedRoot: () => firstOf(c.api.fileList({ path: "/etc" })),
        applyConfigurationDryRun: () =>
          c.api.applyConfiguration({
            configYaml: "version: v1alpha1\nmachine:\n  hostname: dry\n",
            dryRun: true,
          }),
      };
      const gotArgs: Record<string, string> = {};
      const wantArgs: Record<string, string> = {};
      for (const [name, call] of Object.entries(args)) {
        gotArgs[name] = await withTimeout(outcome(call), 5000, `${role} ${name}`);
        wantArgs[name] = ARGUMENTS_EXPECTED[name][role];
      }
      deepEqual(gotArgs, wantArgs, `${role} arguments`);
      c.close();
    }
    // Only the admin and the operator got through to the node actions.
    deepEqual(f.actions.calls.map((c) => `${c.action}:${c.by.role}`), [
      "reboot:os:admin",
      "shutdown:os:admin",
      "reset:os:admin",
      "upgrade:os:admin",
      "rollback:os:admin",
      "unlockVolume:os:admin",
      "reboot:os:operator",
      "shutdown:os:operator",
      "unlockVolume:os:operator",
    ]);
    deepEqual(f.services.calls, [
      "start payload",
      "stop payload",
      "restart payload",
      "start payload",
      "stop payload",
      "restart payload",
    ]);
    deepEqual(f.configs.applied.map((a) => a.by), ["admin/os:admin"]);
  } finally {
    await f.close();
  }
});
