import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { applyConfigText, loadConfigFile } from "./config_loader.ts";
import { Machined } from "./machined.ts";

const GOOD = `version: v1alpha1
machine:
  hostname: node-1
`;

function newMachined() {
  return new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
}

Deno.test("a valid config and the running stage make the machine ready", async () => {
  const m = newMachined();
  m.start();
  await applyConfigText(m.store, GOOD, "test.yaml");
  m.stage.set("running");
  const st = await waitForResource(m.store, "MachineStatus", (r) => r.spec.ready);
  assert.equal(st.spec.stage, "running");
  assert.deepEqual(st.spec.unmetConditions, []);
  assert.equal(
    m.store.get("MachineConfig", "config", "v1alpha1").spec.config.machine.hostname,
    "node-1",
  );
  assert.ok(m.store.list("ControllerStatus").length >= 1);
  await m.stop();
});

Deno.test("an invalid config never replaces a good one; the reason is visible", async () => {
  const m = newMachined();
  m.start();
  await applyConfigText(m.store, GOOD, "good.yaml");
  const bad = await applyConfigText(
    m.store,
    "version: v1alpha1\nmachine:\n  hostnme: x\n",
    "bad.yaml",
  );
  assert.equal(bad.state, "invalid");
  assert.equal(m.store.get("MachineConfig", "config", "v1alpha1").spec.source, "good.yaml");
  const cs = m.store.get("ConfigStatus", "config", "machine").spec;
  assert.equal(cs.state, "invalid");
  assert.equal(cs.errors[0].line, 3);
  assert.match(cs.errors[0].hint ?? "", /hostname/);
  m.stage.set("maintenance");
  const st = await waitForResource(
    m.store,
    "MachineStatus",
    (r) => r.spec.stage === "maintenance",
  );
  assert.equal(st.spec.ready, false);
  assert.match(st.spec.unmetConditions[0].reason, /bad\.yaml/);
  await m.stop();
});

Deno.test("a missing config file is recorded as missing", async () => {
  const m = newMachined();
  const r = await loadConfigFile(m.store, "/nonexistent/machined.yaml");
  assert.equal(r.state, "missing");
  assert.equal(m.store.get("ConfigStatus", "config", "machine").spec.state, "missing");
});

Deno.test("the CA key in the config never enters the store", async () => {
  const m = newMachined();
  const { createCertificateAuthority } = await import("../pki/mod.ts");
  const { renderConfigTemplate } = await import("../config/mod.ts");
  const ca = await createCertificateAuthority();
  const text = renderConfigTemplate({
    hostname: "n1",
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
  });
  const r = await applyConfigText(m.store, text, "ca.yaml");
  assert.equal(r.state, "valid");
  if (r.state === "valid") assert.equal(r.config.machine.ca?.key.trim(), ca.keyPem.trim());
  const stored = m.store.get("MachineConfig", "config", "v1alpha1").spec.config;
  assert.equal(stored.machine.ca?.key, "(redacted)");
  assert.ok(!JSON.stringify(stored).includes("PRIVATE KEY"));
});
