import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeIdentityBackend } from "./backend_fake.ts";
import { identityBackendConformance } from "./backend_conformance.ts";

identityBackendConformance("FakeIdentityBackend", () => new FakeIdentityBackend());

Deno.test("fake identity: injected EPERM and recorded calls", async () => {
  const fake = new FakeIdentityBackend();
  fake.faults.failNext("sethostname", "EPERM");
  await assert.rejects(fake.setHostname("a"), (e) => isSysError(e, "EPERM"));
  await fake.setHostname("b");
  assert.deepEqual(fake.faults.callsOf("sethostname"), [["a"], ["b"]]);
  assert.equal(fake.currentHostname, "b");
});
