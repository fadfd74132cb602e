import assert from "node:assert/strict";
import { FakeFirewallBackend } from "./backend_fake.ts";
import { FIREWALL_CONFORMANCE } from "./backend_conformance.ts";

for (const [name, run] of Object.entries(FIREWALL_CONFORMANCE)) {
  Deno.test(`fake firewall conformance: ${name}`, async () => {
    const backend = new FakeFirewallBackend();
    await run({
      backend,
      deleteBehindBack: (t) => Promise.resolve(backend.deleteBehindBack(t)),
      addBehindBack: (t, r) => Promise.resolve(backend.addBehindBack(t, r)),
    });
  });
}

Deno.test("fake firewall: injected faults fail the call like nft would", async () => {
  const backend = new FakeFirewallBackend();
  backend.faults.failNext("apply", new Error("nft: boom"));
  await assert.rejects(backend.apply("add table inet x\n"), /boom/);
  await backend.apply("add table inet x\n");
  assert.equal(backend.applied, 1);
  assert.deepEqual(backend.tableLines({ family: "inet", name: "x" }), []);
});
