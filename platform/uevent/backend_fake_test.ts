import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeUeventBackend } from "./backend_fake.ts";
import { ueventBackendConformance } from "./backend_conformance.ts";

ueventBackendConformance("fake uevents", () => {
  const backend = new FakeUeventBackend();
  let n = 0;
  return Promise.resolve({
    backend,
    trigger() {
      const devpath = `/devices/virtual/block/loop${n++}`;
      backend.inject({
        action: "change",
        devpath,
        subsystem: "block",
        devname: devpath.slice(devpath.lastIndexOf("/") + 1),
        devtype: "disk",
      });
      return Promise.resolve(devpath);
    },
    flood(count) {
      for (let i = 0; i < count; i++) {
        backend.inject({ action: "change", devpath: `/devices/x${i}`, subsystem: "block" });
      }
      return Promise.resolve();
    },
    cleanup: () => Promise.resolve(),
  });
});

Deno.test("fake uevents: vars mirror the typed fields; foreign senders are ignored", async () => {
  const backend = new FakeUeventBackend();
  const sub = backend.subscribe();
  backend.garbage("foreign");
  backend.inject({
    action: "add",
    devpath: "/devices/virtual/net/veth0",
    subsystem: "net",
    interface: "veth0",
    ifindex: 7,
  });
  const b = await sub.next(1_000);
  assert.ok(b);
  assert.deepEqual(b.events[0].vars, {
    ACTION: "add",
    DEVPATH: "/devices/virtual/net/veth0",
    SUBSYSTEM: "net",
    SEQNUM: "1",
    INTERFACE: "veth0",
    IFINDEX: "7",
  });
  assert.equal(b.resync, false);
  assert.deepEqual(sub.counters(), { received: 1, dropped: 0, rejected: 0, foreign: 1 });
  backend.garbage("rejected");
  const r = await sub.next(1_000);
  assert.ok(r?.resync && r.events.length === 0);
  sub.close();
  assert.equal(backend.subscriptions, 0);
});

Deno.test("fake uevents: armed failures of subscribe and next", async () => {
  const backend = new FakeUeventBackend();
  backend.faults.failNext("subscribe", "EMFILE");
  assert.throws(() => backend.subscribe(), (e) => isSysError(e, "EMFILE"));
  const sub = backend.subscribe();
  backend.faults.failNext("next", "EIO");
  await assert.rejects(sub.next(10), (e) => isSysError(e, "EIO"));
  sub.close();
});
