import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { PermissionDeniedError } from "../errors/mod.ts";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import type { Role } from "../../pki/mod.ts";
import {
  ARGUMENT_ROLES,
  authorize,
  authorizeTimeServer,
  isAllowed,
  isMutating,
  neededRole,
  roleSatisfies,
} from "./rbac.ts";
import { identityFromHeaders, identityToHeaders } from "./identity.ts";

/**
 * The contract, written out by hand (and in docs/api.md's roles table): the
 * least role of every RPC by its proto name, and whether it is audited as
 * mutating. A change to METHOD_ROLES or MUTATING fails here until this table,
 * and the docs, agree.
 */
const CONTRACT: Record<string, { role: Role; mutating: boolean }> = {
  Version: { role: "os:reader", mutating: false },
  Get: { role: "os:reader", mutating: false },
  List: { role: "os:reader", mutating: false },
  Watch: { role: "os:reader", mutating: false },
  Events: { role: "os:reader", mutating: false },
  Reboot: { role: "os:operator", mutating: true },
  Shutdown: { role: "os:operator", mutating: true },
  Reset: { role: "os:admin", mutating: true },
  Upgrade: { role: "os:admin", mutating: true },
  Rollback: { role: "os:admin", mutating: true },
  UnlockVolume: { role: "os:operator", mutating: true },
  GenerateClientConfiguration: { role: "os:admin", mutating: true },
  ServiceList: { role: "os:reader", mutating: false },
  ServiceStart: { role: "os:operator", mutating: true },
  ServiceStop: { role: "os:operator", mutating: true },
  ServiceRestart: { role: "os:operator", mutating: true },
  Logs: { role: "os:reader", mutating: false },
  Dmesg: { role: "os:reader", mutating: false },
  ApplyConfiguration: { role: "os:admin", mutating: true },
  Memory: { role: "os:reader", mutating: false },
  Stats: { role: "os:reader", mutating: false },
  Processes: { role: "os:reader", mutating: false },
  Mounts: { role: "os:reader", mutating: false },
  Cgroups: { role: "os:reader", mutating: false },
  Time: { role: "os:reader", mutating: false },
  Netstat: { role: "os:reader", mutating: false },
  // observability: containers, support, dependencies
  Containers: { role: "os:reader", mutating: false },
  Images: { role: "os:reader", mutating: false },
  ImagePull: { role: "os:operator", mutating: true },
  Metrics: { role: "os:reader", mutating: false },
  ControllerGraph: { role: "os:reader", mutating: false },
  FileList: { role: "os:reader", mutating: false },
  FileRead: { role: "os:reader", mutating: false },
  DiskUsage: { role: "os:reader", mutating: false },
  FileCopy: { role: "os:reader", mutating: false },
};

/** Which roles may call an RPC needing `least`, spelled out. */
const ALLOWED: Record<Role, readonly Role[]> = {
  "os:reader": ["os:admin", "os:operator", "os:reader"],
  "os:operator": ["os:admin", "os:operator"],
  "os:admin": ["os:admin"],
};

Deno.test("roles are ordered admin > operator > reader", () => {
  ok(roleSatisfies("os:admin", "os:reader"));
  ok(roleSatisfies("os:operator", "os:operator"));
  ok(!roleSatisfies("os:reader", "os:operator"));
  ok(!roleSatisfies("os:operator", "os:admin"));
});

Deno.test("the contract names every MachineService RPC", () => {
  deepEqual(MachineService.methods.map((m) => m.name).sort(), Object.keys(CONTRACT).sort());
});

Deno.test("every RPC needs exactly its contracted role and is classified as contracted", () => {
  for (const [method, { role, mutating }] of Object.entries(CONTRACT)) {
    equal(neededRole(method), role, method);
    equal(isMutating(method), mutating, `${method} mutating`);
    for (const caller of ["os:admin", "os:operator", "os:reader"] as Role[]) {
      equal(
        isAllowed(caller, MachineService.typeName, method),
        ALLOWED[role].includes(caller),
        `${caller} → ${method}`,
      );
    }
  }
});

Deno.test("arguments that need more than their RPC's role, pinned by hand", () => {
  deepEqual(
    Object.fromEntries(Object.entries(ARGUMENT_ROLES).map(([k, v]) => [k, v.role])),
    {
      timeConfiguredServer: "os:reader",
      timeOtherServer: "os:operator",
      fileReaderRoot: "os:reader",
      filePrivilegedRoot: "os:operator",
    },
  );
});

Deno.test("Time: a reader names only the configured servers; an operator or admin any", () => {
  const configured = ["pool.ntp.org", "192.0.2.7"];
  for (const role of ["os:admin", "os:operator", "os:reader"] as Role[]) {
    authorizeTimeServer(role, "Pool.NTP.org.", configured);
    authorizeTimeServer(role, "192.0.2.7", configured);
  }
  authorizeTimeServer("os:operator", "198.51.100.1", configured);
  authorizeTimeServer("os:admin", "198.51.100.1", []);
  throws(
    () => authorizeTimeServer("os:reader", "198.51.100.1", configured),
    (e: unknown) =>
      e instanceof PermissionDeniedError &&
      e.message ===
        'Role "os:reader" may query only the node\'s configured time servers ("pool.ntp.org", ' +
          '"192.0.2.7"); naming "198.51.100.1" needs "os:operator" or higher, because it makes ' +
          "the node send UDP to it",
  );
  throws(() => authorizeTimeServer("os:reader", "pool.ntp.org", []), /servers \(none\)/);
});

Deno.test("unknown RPCs and services are refused; reflection is open", () => {
  ok(!isAllowed("os:admin", MachineService.typeName, "Wipe"));
  ok(!isMutating("Wipe"));
  ok(!isAllowed("os:admin", "other.Service", "Version"));
  ok(isAllowed("os:reader", "grpc.reflection.v1.ServerReflection", "ServerReflectionInfo"));
  ok(isAllowed("os:reader", "grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo"));
});

Deno.test("authorize names the role and the method", () => {
  throws(
    () => authorize("os:reader", MachineService.typeName, "Reboot"),
    (e: unknown) =>
      e instanceof PermissionDeniedError &&
      e.message ===
        'Role "os:reader" may not call machined.v1.MachineService/Reboot (needs "os:operator" or higher)',
  );
});

Deno.test("identity survives the header hop and rejects a forged role", () => {
  const h = new Headers();
  identityToHeaders({ name: "älice, x", role: "os:operator", serialNumber: "0a" }, h);
  deepEqual(identityFromHeaders((n) => h.get(n)), {
    name: "älice, x",
    role: "os:operator",
    serialNumber: "0a",
  });
  h.set("x-machined-role", "root");
  deepEqual(identityFromHeaders((n) => h.get(n)), undefined);
});
