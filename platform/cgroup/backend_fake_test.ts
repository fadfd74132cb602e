import assert from "node:assert/strict";
import { cgroupBackendConformance } from "./backend_conformance.ts";
import { FakeCgroupBackend } from "./backend_fake.ts";
import { CgroupError } from "./backend.ts";

cgroupBackendConformance("FakeCgroupBackend", () =>
  Promise.resolve({
    backend: new FakeCgroupBackend(),
    limits: [{ memoryMax: 64 << 20, cpuMax: "50000 100000", pidsMax: 64 }, { pidsMax: 8 }],
  }));

Deno.test("FakeCgroupBackend: remove fails while processes remain; faults are injectable", async () => {
  const b = new FakeCgroupBackend();
  await b.prepare("svc", {});
  b.groups.get("svc")!.pids.push(42);
  await assert.rejects(b.remove("svc"), CgroupError);
  b.faults.failNext("prepare", "EACCES");
  await assert.rejects(b.prepare("svc", {}), /EACCES/);
});
