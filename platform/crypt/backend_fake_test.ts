import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeCryptBackend } from "./backend_fake.ts";
import { cryptBackendConformance } from "./backend_conformance.ts";

cryptBackendConformance("FakeCryptBackend", () =>
  Promise.resolve({
    backend: new FakeCryptBackend(),
    device: "/dev/fake0",
    cleanup: () => Promise.resolve(),
  }));

Deno.test("fake crypt: an injected failure of addKey leaves the header as it was", async () => {
  const b = new FakeCryptBackend();
  const k = new TextEncoder().encode("first-key-123");
  await b.format("/dev/x", k, { slot: 0 });
  b.faults.failNext("addKey", "EIO");
  await assert.rejects(b.addKey("/dev/x", k, k, 1), (e) => isSysError(e, "EIO"));
  assert.deepEqual((await b.dump("/dev/x")).slots, [{ slot: 0 }]);
  assert.deepEqual(b.faults.callsOf("addKey"), [["/dev/x", 1]]);
});
