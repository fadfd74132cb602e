import assert from "node:assert/strict";
import { kmsgBackendConformance } from "./backend_conformance.ts";
import { FakeKmsgBackend } from "./backend_fake.ts";
import { formatKmsgRecord, parseKmsgRecord } from "./record.ts";

kmsgBackendConformance("FakeKmsgBackend", () => {
  const backend = new FakeKmsgBackend();
  backend.log("Linux version 6.18");
  return Promise.resolve({
    backend,
    log: (text) => Promise.resolve(void backend.log(text)),
  });
});

Deno.test("kmsg records parse: priority, sequence, time, flags, text, dictionary", () => {
  const r = parseKmsgRecord(
    "30,1234,5678901,-,caller=T1;eth0: link up\n SUBSYSTEM=net\n DEVICE=n2",
  );
  assert.deepEqual(r, {
    level: 6,
    facility: 3,
    seq: 1234,
    usec: 5678901,
    flags: "-",
    text: "eth0: link up",
    fields: { SUBSYSTEM: "net", DEVICE: "n2" },
  });
  assert.equal(formatKmsgRecord(r!), "[    5.678901] eth0: link up");
  assert.equal(parseKmsgRecord("garbage"), undefined);
  assert.equal(parseKmsgRecord("x,1,2,-;t"), undefined);
  assert.equal(parseKmsgRecord("6,1,2,-;a;b")?.text, "a;b");
});

Deno.test("FakeKmsgBackend reports gaps and injected open failures", async () => {
  const b = new FakeKmsgBackend();
  b.log("one");
  b.lose();
  b.log("two");
  const got = [];
  for await (const r of b.read()) got.push("lost" in r ? "<lost>" : r.text);
  assert.deepEqual(got, ["one", "<lost>", "two"]);
  b.faults.failNext("open", "EPERM");
  await assert.rejects(async () => {
    for await (const _ of b.read()) { /* nothing */ }
  }, /EPERM/);
});
