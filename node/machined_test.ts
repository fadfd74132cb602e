import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { applyConfigText, readFirstConfig, recordMissingConfig } from "../config/keeper/mod.ts";
import { ConfigKeeper } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";

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
  assert.equal(await readFirstConfig(["/nonexistent/machined.yaml"]), undefined);
  await recordMissingConfig(m.store, ["/nonexistent/machined.yaml"]);
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

Deno.test("a good config applied in maintenance moves the node to running and persists on STATE", async () => {
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const bad = await keeper.apply("version: v1alpha1\nmachine: {}\n", "image");
  assert.equal(bad.state, "invalid");
  m.stage.set("maintenance");
  const state = await Deno.makeTempDir();
  try {
    await keeper.stateMounted(state);
    await assert.rejects(() => Deno.stat(`${state}/config.yaml`), Deno.errors.NotFound);
    assert.equal((await keeper.apply(GOOD, "api")).state, "valid");
    assert.equal(m.stage.get(), "running");
    assert.equal(await Deno.readTextFile(`${state}/config.yaml`), GOOD);
    assert.equal((await Deno.stat(`${state}/config.yaml`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(state, { recursive: true });
    await m.stop();
  }
});

Deno.test("on a later boot the config persisted on STATE wins over the image's", async () => {
  const m = newMachined();
  const keeper = new ConfigKeeper(m);
  await keeper.apply(GOOD, "image");
  const state = await Deno.makeTempDir();
  try {
    const newer = GOOD.replace("node-1", "node-2");
    await Deno.writeTextFile(`${state}/config.yaml`, newer);
    await keeper.stateMounted(state);
    assert.equal(
      m.store.get("MachineConfig", "config", "v1alpha1").spec.config.machine.hostname,
      "node-2",
    );
    assert.equal(keeper.text, newer);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
});
