import { deepEqual, ok, throws } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { authorize, isAllowed, METHOD_ROLES, roleSatisfies } from "./rbac.ts";
import { identityFromHeaders, identityToHeaders } from "./identity.ts";

Deno.test("roles are ordered admin > operator > reader", () => {
  ok(roleSatisfies("os:admin", "os:reader"));
  ok(roleSatisfies("os:operator", "os:operator"));
  ok(!roleSatisfies("os:reader", "os:operator"));
  ok(!roleSatisfies("os:operator", "os:admin"));
});

Deno.test("every MachineService method has a role and unknown ones are refused", () => {
  deepEqual(
    MachineService.methods.map((m) => m.localName).sort(),
    Object.keys(METHOD_ROLES).sort(),
  );
  ok(!isAllowed("os:admin", MachineService.typeName, "Reset"));
  ok(!isAllowed("os:admin", "other.Service", "Version"));
  ok(isAllowed("os:reader", "grpc.reflection.v1.ServerReflection", "ServerReflectionInfo"));
});

Deno.test("service, log and config RPCs need the documented roles", () => {
  deepEqual(
    {
      serviceList: METHOD_ROLES.serviceList,
      serviceStart: METHOD_ROLES.serviceStart,
      serviceStop: METHOD_ROLES.serviceStop,
      serviceRestart: METHOD_ROLES.serviceRestart,
      logs: METHOD_ROLES.logs,
      dmesg: METHOD_ROLES.dmesg,
      applyConfiguration: METHOD_ROLES.applyConfiguration,
    },
    {
      serviceList: "os:reader",
      serviceStart: "os:operator",
      serviceStop: "os:operator",
      serviceRestart: "os:operator",
      logs: "os:reader",
      dmesg: "os:reader",
      applyConfiguration: "os:admin",
    },
  );
});

Deno.test("authorize names the role and the method", () => {
  throws(
    () => authorize("os:reader", MachineService.typeName, "Reboot"),
    (e: unknown) =>
      e instanceof ConnectError && e.code === Code.PermissionDenied &&
      e.rawMessage.includes('"os:reader"') && e.rawMessage.includes("Reboot"),
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
