import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { Machined } from "../core/mod.ts";
import { FakeMountBackend } from "../platform/mount/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import { shutdownNode, unmountOrder } from "./shutdown.ts";

Deno.test("unmount order: newest and deepest first, keeping pseudo filesystems and /", () => {
  const mounts = [
    { id: 1, mountPoint: "/" },
    { id: 2, mountPoint: "/proc" },
    { id: 3, mountPoint: "/system/state" },
    { id: 4, mountPoint: "/var" },
    { id: 5, mountPoint: "/var/lib/containerd" },
    { id: 6, mountPoint: "/dev/pts" },
  ];
  assert.deepEqual(unmountOrder(mounts, ["/proc", "/dev"]), [
    "/var/lib/containerd",
    "/var",
    "/system/state",
  ]);
});

Deno.test("shutdown stops services before the API, syncs, unmounts, then reboots", async () => {
  const machined = new Machined({
    mode: "node",
    pid1: true,
    logger: createLogger({ console: false }),
  });
  machined.start();
  const order: string[] = [];
  const power = new FakePowerBackend();
  const mount = new FakeMountBackend();
  mount.addDirectory("/var").addDirectory("/system/state");
  await mount.mount({ source: "tmpfs", target: "/var", fstype: "tmpfs" });
  await mount.mount({ source: "tmpfs", target: "/system/state", fstype: "tmpfs" });
  mount.markBusy("/system/state");
  // Like reboot(2), the fake's restart never returns; wait for the machine to end instead.
  void shutdownNode("reboot", {
    machined,
    power,
    mount,
    stopServices: () => {
      order.push("services");
      return Promise.resolve();
    },
    stopApi: () => {
      order.push("api");
      return Promise.resolve();
    },
    afterControllers: () => {
      order.push("afterControllers");
      return Promise.resolve();
    },
    keepMounted: ["/proc", "/sys", "/dev"],
  });
  assert.equal(await power.ended(), "restarting");
  assert.deepEqual(order, ["services", "api", "afterControllers"]);
  assert.equal(machined.stage.get(), "rebooting");
  const left = (await mount.mounts()).map((m) => m.mountPoint);
  assert.ok(!left.includes("/var") && !left.includes("/system/state"), "busy ones are detached");
  const phases = machined.events.history().filter((e) => e.kind === "phase" && e.action === "done")
    .map((e) => e.subject);
  assert.deepEqual(phases.slice(-8), [
    "stopServices",
    "stopApi",
    "stopControllers",
    "afterControllers",
    "sync",
    "unmount",
    "syncAgain",
    "reboot",
  ]);
  assert.ok(power.syncs >= 2, "synced before and after unmounting");
});

Deno.test("shutdown with a hung stopServices and a hung unmount still syncs and reboots in bounded time", async () => {
  const machined = new Machined({
    mode: "node",
    pid1: true,
    logger: createLogger({ console: false }),
  });
  machined.start();
  const power = new FakePowerBackend();
  const mount = new FakeMountBackend();
  // A stuck unmount: listing the mounts never returns.
  mount.mounts = () => new Promise(() => {});
  const t0 = performance.now();
  void shutdownNode("poweroff", {
    machined,
    power,
    mount,
    stopServices: () => new Promise(() => {}), // an unkillable service
    keepMounted: ["/proc", "/sys", "/dev"],
    deadlinesMs: { stopServices: 50, unmount: 50 },
  });
  assert.equal(await power.ended(), "powered-off");
  const ms = performance.now() - t0;
  assert.ok(ms < 2_000, `went down in ${ms.toFixed(0)} ms`);
  assert.ok(power.syncs >= 2, "synced before and after the hung unmount");
  const overran = machined.events.history().filter((e) => e.action === "overran")
    .map((e) => e.subject);
  assert.deepEqual(overran, ["stopServices", "unmount"]);
});
