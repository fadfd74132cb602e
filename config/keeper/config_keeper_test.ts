import assert from "node:assert/strict";
import { CANARY, CANARY_PEM, CANARY_SHAPES } from "../testing.ts";
import { createLogger } from "../../logs/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { configApplier } from "./config_modes.ts";
import { Machined } from "../../core/mod.ts";

const HEAD = "version: v1alpha1\nmachine:\n  hostname: node-1\n";
const BY = { name: "test", role: "os:admin" };

/** Hostile configs, each of which must be refused with a positioned error. */
const HOSTILE: Record<string, string> = {
  "self-referencing alias":
    "version: v1alpha1\nmachine:\n  hostname: node-2\n  sysctls: &r\n    a: *r\n",
  "deep nesting": HEAD + "  sysctls: " + "[".repeat(3000) + "]".repeat(3000) + "\n",
  "oversized": HEAD + "  sysctls:\n" + "    net.k: 1\n".repeat(30_000),
  "machined as a service id": HEAD + "  services: [{id: machined, command: [/bin/x]}]\n",
};

async function running(): Promise<{ m: Machined; keeper: ConfigKeeper }> {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  m.start();
  const keeper = new ConfigKeeper(m);
  const r = await keeper.apply(HEAD, "good.yaml");
  assert.equal(r.state, "valid");
  return { m, keeper };
}

Deno.test("ApplyConfiguration refuses hostile configs with positions; the running config stays", async () => {
  const { m, keeper } = await running();
  const applier = configApplier(keeper);
  for (const [name, text] of Object.entries(HOSTILE)) {
    for (const dryRun of [true, false]) {
      const r = await applier.apply(text, { dryRun, by: BY });
      assert.equal(r.state, "invalid", name);
      assert.ok(r.errors.length >= 1, name);
      for (const e of r.errors) assert.ok(e.line >= 1 && e.column >= 1, `${name}: ${e.message}`);
    }
  }
  assert.equal(keeper.text, HEAD);
  const mc = m.store.get("MachineConfig", "config", "v1alpha1");
  assert.equal(mc.spec.source, "good.yaml");
  assert.equal(mc.spec.config.machine.hostname, "node-1");
  assert.equal(m.store.get("ConfigStatus", "config", "machine").spec.state, "valid");
  assert.ok(!m.events.history().some((e) => /applied/.test(JSON.stringify(e))));
  await m.stop();
});

Deno.test("a canary key never reaches ConfigStatus, MachineStatus, the log or events", async () => {
  const { m, keeper } = await running();
  const applier = configApplier(keeper);
  const leaks: string[] = [];
  const seen = (where: string, x: unknown) => {
    const text = JSON.stringify(x);
    if (text.includes(CANARY.slice(20, 40)) || /PRIVATE KEY-----/.test(text)) leaks.push(where);
  };
  for (const [shape, yaml] of Object.entries(CANARY_SHAPES)) {
    const api = await applier.apply(HEAD + yaml, { dryRun: false, by: BY });
    assert.equal(api.state, "invalid", shape);
    seen(`${shape}: ApplyConfiguration`, api.errors);
    const r = await keeper.apply(HEAD + yaml, `${shape}.yaml`);
    assert.equal(r.state, "invalid", shape);
    m.logger.warn("config", "invalid config", {
      errors: r.state === "invalid" ? r.errors.map((e) => e.format()).join("; ") : "",
    });
    seen(`${shape}: ConfigStatus`, m.store.get("ConfigStatus", "config", "machine").spec);
    const st = await waitForResource(
      m.store,
      "MachineStatus",
      (s) => s.spec.unmetConditions.some((c) => c.reason.includes(`${shape}.yaml`)),
    );
    seen(`${shape}: MachineStatus`, st.spec);
  }
  seen("log", m.logger.ring.tail());
  seen("events", m.events.history());
  assert.deepEqual(leaks, []);
  assert.equal(m.store.get("MachineConfig", "config", "v1alpha1").spec.source, "good.yaml");
  await m.stop();
});

Deno.test("the MachineConfig resource shows the CA key as (redacted); the keeper keeps the text", async () => {
  const { m, keeper } = await running();
  const block = (pem: string) => "|\n" + pem.replace(/^/gm, "      ").trimEnd() + "\n";
  const crt = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";
  const text = HEAD + `  ca:\n    crt: ${block(crt)}    key: ${block(CANARY_PEM)}`;
  const r = await keeper.apply(text, "ca.yaml");
  assert.equal(r.state, "valid");
  assert.ok(r.state === "valid" && r.config.machine.ca?.key.includes(CANARY));
  const shown = m.store.get("MachineConfig", "config", "v1alpha1").spec;
  assert.equal(shown.source, "ca.yaml");
  assert.equal(shown.config.machine.ca?.key, "(redacted)");
  assert.match(shown.config.machine.ca?.crt ?? "", /BEGIN CERTIFICATE/);
  assert.ok(!JSON.stringify(m.store.list("MachineConfig")).includes(CANARY.slice(20, 40)));
  assert.equal(keeper.text, text);
  await m.stop();
});
