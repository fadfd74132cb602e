import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { Machined } from "../core/mod.ts";
import { UKI_PCR } from "../platform/crypt/mod.ts";
import { TestTpm } from "../controllers/block/testing_tpm.ts";
import { TpmUnsealCloser } from "./tpm_close.ts";

const machined = () =>
  new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });

Deno.test("the closer extends PCR 11 once per boot and says so; later calls do not extend again", async () => {
  const m = machined();
  const tpm = await TestTpm.create();
  const before = await tpm.tpm.readPcr(UKI_PCR);
  const c = new TpmUnsealCloser(tpm, m);
  assert.equal(c.closed, false);
  await Promise.all([c.close(), c.close()]);
  await c.close();
  assert.equal(c.closed, true);
  const sha = async (b: Uint8Array) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", b.slice()));
  const once = await sha(
    new Uint8Array([...before, ...await sha(new TextEncoder().encode("sysinit"))]),
  );
  assert.deepEqual(await tpm.tpm.readPcr(UKI_PCR), once, "extended exactly once");
  const events = m.events.history().filter((e) => e.subject === "tpm");
  assert.deepEqual(events.map((e) => e.action), ["closed"]);
  assert.match(events[0].message, /PCR 11 extended with sysinit/);
});

Deno.test("without a TPM the closer opens the gate anyway and says why", async () => {
  const m = machined();
  const tpm = await TestTpm.create();
  tpm.missing = "no TPM device (/dev/tpmrm0)";
  const c = new TpmUnsealCloser(tpm, m);
  await c.close();
  assert.equal(c.closed, true);
  const [e] = m.events.history().filter((e) => e.subject === "tpm");
  assert.equal(e.action, "skipped");
  assert.match(e.message, /no TPM device/);
});
