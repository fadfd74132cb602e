import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { Machined } from "../core/mod.ts";
import { FakeMountBackend } from "../platform/mount/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import type { ResetSequence } from "../reset/mod.ts";
import { shutdownNode } from "./shutdown.ts";

async function machine() {
  const machined = new Machined({
    mode: "node",
    pid1: true,
    logger: createLogger({ console: false }),
  });
  machined.start();
  const mount = new FakeMountBackend();
  mount.addDirectory("/var").addDirectory("/system/state");
  await mount.mount({ source: "/dev/vda3", target: "/var", fstype: "ext4" });
  await mount.mount({ source: "/dev/vda2", target: "/system/state", fstype: "ext4" });
  return { machined, mount, power: new FakePowerBackend() };
}

/** A service that ignores SIGTERM: its stop ends only once it is killed. */
function stubbornServices() {
  let kill!: () => void;
  const killed = new Promise<void>((r) => (kill = r));
  return { stop: () => killed, kill };
}

function reset(
  mode: ResetSequence["mode"],
  log: string[],
  kill: () => void,
  mount: FakeMountBackend,
  gracefulDeadlineMs = 200,
): ResetSequence {
  return {
    mode,
    gracefulDeadlineMs,
    forceKill: () => {
      log.push("kill");
      kill();
      return Promise.resolve();
    },
    wipe: async () => {
      const left = (await mount.mounts()).map((m) => m.mountPoint);
      log.push(`wipe mounted=${left.filter((m) => m === "/var" || m === "/system/state")}`);
    },
    onStep: (p) => log.push(`step ${p}`),
  };
}

Deno.test("graceful reset of a service that ignores SIGTERM falls through to forced at its deadline, wipes after unmounting, reboots", async () => {
  const { machined, mount, power } = await machine();
  const svc = stubbornServices();
  const log: string[] = [];
  const t0 = performance.now();
  void shutdownNode("reboot", {
    machined,
    power,
    mount,
    stopServices: svc.stop,
    keepMounted: ["/proc"],
    reset: reset("graceful", log, svc.kill, mount, 300),
  });
  assert.equal(await power.ended(), "restarting");
  const ms = performance.now() - t0;
  assert.ok(ms >= 300 && ms < 5000, `${ms} ms`);
  assert.deepEqual(log.filter((l) => !l.startsWith("step")), ["kill", "wipe mounted="]);
  assert.deepEqual(log.filter((l) => l.startsWith("step")).map((l) => l.slice(5)), [
    "stopServices",
    "stopControllers",
    "sync",
    "unmount",
    "wipe",
    "syncAgain",
  ]);
  const forced = machined.events.history().find((e) =>
    e.subject === "reset" && e.action === "forced"
  );
  assert.ok(forced, "the fall-through is an event");
});

Deno.test("graceful reset whose services stop in time kills nothing", async () => {
  const { machined, mount, power } = await machine();
  const log: string[] = [];
  void shutdownNode("poweroff", {
    machined,
    power,
    mount,
    stopServices: () => Promise.resolve(),
    keepMounted: ["/proc"],
    reset: reset("graceful", log, () => {}, mount, 10_000),
  });
  assert.equal(await power.ended(), "powered-off");
  assert.ok(!log.includes("kill"));
  assert.ok(log.includes("wipe mounted="));
});

Deno.test("forced reset kills at once, without waiting for any grace period", async () => {
  const { machined, mount, power } = await machine();
  const svc = stubbornServices();
  const log: string[] = [];
  const t0 = performance.now();
  void shutdownNode("reboot", {
    machined,
    power,
    mount,
    stopServices: svc.stop,
    keepMounted: ["/proc"],
    reset: reset("forced", log, svc.kill, mount, 60_000),
  });
  assert.equal(await power.ended(), "restarting");
  assert.ok(performance.now() - t0 < 3000);
  assert.equal(log.filter((l) => !l.startsWith("step"))[0], "kill");
});

Deno.test("a failing wipe is reported and the node still reboots", async () => {
  const { machined, mount, power } = await machine();
  const r = reset("forced", [], () => {}, mount);
  void shutdownNode("reboot", {
    machined,
    power,
    mount,
    keepMounted: ["/proc"],
    reset: { ...r, wipe: () => Promise.reject(new Error("EIO")) },
  });
  assert.equal(await power.ended(), "restarting");
  const failed = machined.events.history().find((e) =>
    e.subject === "wipe" && e.action === "failed"
  );
  assert.ok(failed, JSON.stringify(machined.events.history().map((e) => [e.subject, e.action])));
});
