import assert from "node:assert/strict";
import { create, toBinary } from "@bufbuild/protobuf";
import { WatchResponseSchema } from "../api/gen/machined/v1/machine_pb.ts";
import { structIntValue, watchKind } from "./soak_wire.ts";

/** A MachineConfig update as machined encodes it: new config with `now`, old with `before`. */
function update(now: string, before: string): Uint8Array {
  const resource = (v: string) => ({
    metadata: { type: "MachineConfig", namespace: "config", id: "v1alpha1", version: 3n },
    spec: {
      case: "machineConfig" as const,
      value: {
        source: "api",
        config: {
          version: "v1alpha1",
          machine: { hostname: "dev", sysctls: { "vm.swappiness": v, "vm.other": "9" } },
        },
      },
    },
  });
  return toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, {
      event: { case: "updated", value: { resource: resource(now), old: resource(before) } },
    }),
  );
}

Deno.test("watchKind: the oneof case from the first byte of a real encoding", () => {
  assert.equal(watchKind(update("1", "0")), "updated");
  const boot = toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, { event: { case: "bootstrapped", value: {} } }),
  );
  assert.equal(watchKind(boot), "bootstrapped");
  const over = toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, { event: { case: "overflow", value: { dropped: 5n } } }),
  );
  assert.equal(watchKind(over), "overflow");
  assert.equal(watchKind(new Uint8Array([0x7a])), "other");
});

Deno.test("structIntValue: the new resource's value, not the old one's or a sibling's", () => {
  assert.equal(structIntValue(update("128", "127"), "vm.swappiness"), 128);
  assert.equal(structIntValue(update("7", "6"), "vm.other"), 9);
  assert.equal(structIntValue(update("7", "6"), "vm.absent"), undefined);
  assert.equal(structIntValue(update("seven", "6"), "vm.swappiness"), undefined);
  assert.equal(structIntValue(new Uint8Array(0), "vm.swappiness"), undefined);
});
