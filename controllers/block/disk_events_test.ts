import assert from "node:assert/strict";
import { fakeUevent, FakeUeventBackend } from "../../platform/uevent/mod.ts";
import {
  DiskEventsError,
  DiskEventWatch,
  disksOfUevents,
  MAX_PENDING_DISKS,
} from "./disk_events.ts";

const ev = (action: string, devpath: string, subsystem = "block", devtype?: string) =>
  fakeUevent({ action, devpath, subsystem, devtype }, 1);

Deno.test("disksOfUevents: a disk names itself, a partition its parent, other subsystems nothing", () => {
  assert.deepEqual(
    [
      ...disksOfUevents([
        ev("add", "/devices/pci0000:00/0000:00:04.0/virtio1/block/vda", "block", "disk"),
        ev("change", "/devices/virtual/block/loop3/loop3p1", "block", "partition"),
        ev("remove", "/devices/virtual/block/loop3/loop3p2", "block", "partition"),
        ev("add", "/devices/virtual/net/veth0", "net"),
        ev("add", "/devices/virtual/block/..", "block", "disk"),
        ev("change", "/devices/virtual/block/zram0", "block"),
      ]),
    ],
    ["vda", "loop3", "zram0"],
  );
});

Deno.test("DiskEventWatch: full first, then the named disks; a resync or too many disks is full", async () => {
  const uevents = new FakeUeventBackend();
  const watch = new DiskEventWatch(uevents);
  const abort = new AbortController();
  let wakes = 0;
  let woke: () => void = () => {};
  const running = watch.run(() => {
    wakes++;
    woke();
  }, abort.signal);
  const nextWake = () => new Promise<void>((r) => (woke = r));
  assert.ok(watch.live);
  assert.deepEqual(watch.take(), { full: true });
  assert.deepEqual(watch.take(), { full: true }, "nothing queued means a full rescan");

  let w = nextWake();
  uevents.inject({ action: "add", devpath: "/devices/virtual/block/loop1", subsystem: "block" });
  await w;
  assert.deepEqual(watch.take(), { full: false, disks: ["loop1"] });

  w = nextWake();
  uevents.overrun(3);
  await w;
  assert.deepEqual(watch.take(), { full: true });

  w = nextWake();
  for (let i = 0; i <= MAX_PENDING_DISKS; i++) {
    uevents.inject({
      action: "add",
      devpath: `/devices/virtual/block/ram${i}`,
      subsystem: "block",
    });
  }
  await w;
  assert.deepEqual(watch.take(), { full: true });

  const before = wakes;
  uevents.inject({ action: "add", devpath: "/devices/virtual/net/eth9", subsystem: "net" });
  abort.abort();
  await running;
  assert.equal(wakes, before, "a net uevent wakes nothing; stopping wakes nothing");
  assert.equal(watch.live, false);
  assert.equal(uevents.subscriptions, 0);
});

Deno.test("DiskEventWatch: a failed stream falls back to rescans and says why", async () => {
  const uevents = new FakeUeventBackend();
  uevents.faults.failNext("subscribe", "EPERM");
  const watch = new DiskEventWatch(uevents);
  await assert.rejects(watch.run(() => {}, new AbortController().signal), DiskEventsError);
  assert.equal(watch.live, false);

  uevents.faults.failNext("next", "EIO");
  let wakes = 0;
  await assert.rejects(watch.run(() => wakes++, new AbortController().signal), (e) => {
    assert.ok(e instanceof DiskEventsError);
    assert.match(e.message, /rescanning periodically/);
    return true;
  });
  assert.equal(watch.live, false);
  assert.equal(wakes, 2, "woken once subscribed, and once more to rescan after the failure");
  assert.deepEqual(watch.take(), { full: true });
  assert.equal(uevents.subscriptions, 0);
});
