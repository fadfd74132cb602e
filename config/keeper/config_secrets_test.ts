import assert from "node:assert/strict";
import { renderConfigTemplate } from "../mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { createCertificateAuthority } from "../../pki/mod.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { forbiddenSecretError } from "./config_secrets.ts";
import { Machined } from "../../core/mod.ts";

Deno.test("a config on the kernel command line with the CA key is refused, pointing at the key", async () => {
  const ca = await createCertificateAuthority();
  const text = renderConfigTemplate({
    hostname: "node-1",
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
  });
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const keeper = new ConfigKeeper(m);
  const r = await keeper.apply(text, "cmdline", { publicSource: "kernel command line" });
  assert.equal(r.state, "invalid");
  const status = m.store.get("ConfigStatus", "config", "machine").spec;
  assert.equal(status.state, "invalid");
  assert.equal(status.errors.length, 1);
  assert.equal(status.errors[0].path, "machine.ca.key");
  assert.equal(status.errors[0].line, text.split("\n").findIndex((l) => /^\s+key:/.test(l)) + 1);
  assert.match(status.errors[0].message, /kernel command line may not carry the CA private key/);
  assert.equal(keeper.config, undefined);
  assert.equal(keeper.rejectedText, undefined, "its CA is never lent to the API");
  assert.throws(() => m.store.get("MachineConfig", "config", "v1alpha1"));
});

Deno.test("a config on the kernel command line without a CA key is applied as usual", async () => {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const keeper = new ConfigKeeper(m);
  const text = renderConfigTemplate({ hostname: "node-1" });
  assert.equal(forbiddenSecretError(text, "cmdline", "kernel command line"), undefined);
  const r = await keeper.apply(text, "cmdline", { publicSource: "kernel command line" });
  assert.equal(r.state, "valid");
  assert.equal(forbiddenSecretError("{{{", "cmdline", "x"), undefined);
});
