import assert from "node:assert/strict";
import { MOUNT_STATUS, type MountStatusSpec } from "../resources/mod.ts";
import { applyConfigText } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { varMountedGate } from "./var_gate.ts";

const CONFIG = (install: boolean) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n` +
  (install ? "  install:\n    disk: /dev/vdb\n" : "");

function ephemeral(over: Partial<MountStatusSpec>): MountStatusSpec {
  return {
    volume: "EPHEMERAL",
    phase: "mounting",
    mounted: false,
    source: "/dev/vdb2",
    target: "/var",
    filesystem: "ext4",
    flags: [],
    message: "",
    error: null,
    ...over,
  };
}

Deno.test("var gate: open without an install disk; else shut until EPHEMERAL is mounted, then stays open", async () => {
  const m = new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });
  const gate = varMountedGate(m.store);
  assert.equal(gate(), undefined, "no config yet: nothing to wait for");
  await applyConfigText(m.store, CONFIG(false), "a.yaml");
  assert.equal(gate(), undefined, "no install disk: /var is the image's");

  await applyConfigText(m.store, CONFIG(true), "b.yaml");
  assert.equal(gate(), "waiting for EPHEMERAL to be mounted at /var");
  const ptr = { type: MOUNT_STATUS, namespace: "block", id: "EPHEMERAL" } as const;
  await m.store.modify(ptr, "test", () =>
    ephemeral({
      phase: "failed",
      error: { message: "Cannot mount /dev/vdb2 on /var: EBUSY", code: "EBUSY", op: "mount" },
    }));
  assert.equal(
    gate(),
    "waiting for EPHEMERAL to be mounted at /var (Cannot mount /dev/vdb2 on /var: EBUSY)",
  );
  await m.store.modify(ptr, "test", () => ephemeral({ phase: "ready", mounted: true }));
  assert.equal(gate(), undefined);
  // Once /var was mounted, later changes (a refused new install disk) hold nothing.
  await m.store.modify(ptr, "test", () => ephemeral({ phase: "waiting" }));
  assert.equal(gate(), undefined);
});

Deno.test("var gate with a TPM: EPHEMERAL mounted still waits until PCR 11 is closed to tpm keys", async () => {
  const m = new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });
  let closed = false;
  const gate = varMountedGate(m.store, () => closed);
  await applyConfigText(m.store, CONFIG(true), "b.yaml");
  const ptr = { type: MOUNT_STATUS, namespace: "block", id: "EPHEMERAL" } as const;
  await m.store.modify(ptr, "test", () => ephemeral({ phase: "ready", mounted: true }));
  assert.equal(gate(), "waiting for PCR 11 to be closed to tpm keys");
  closed = true;
  assert.equal(gate(), undefined);
});
