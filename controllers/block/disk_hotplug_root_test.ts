/**
 * Privileged (losetup needs root): block hotplug by uevents on the real
 * kernel. A loop device attached after discovery started gets its DiskStatus
 * from the uevent, long before the (here one-hour) rescan; detached, it goes.
 * Prints the time from running losetup to the DiskStatus, with a monotonic
 * clock, as JSON lines; waits are bounded, never timed. Reads the host's
 * disks (read-only) and changes nothing but its own loop device.
 */
import assert from "node:assert/strict";
import { NativeBlockBackend } from "../../platform/block/mod.ts";
import { NativeMountBackend } from "../../platform/mount/mod.ts";
import { NativeUeventBackend } from "../../platform/uevent/mod.ts";
import { DISK_STATUS, type ResourceSpecs } from "../../resources/mod.ts";
import { ControllerRuntime, type ControllerStats, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { DiskDiscoveryController } from "./disk_discovery.ts";
import { loopDisk, rootSkipReason, run, WAIT_MS } from "./testing_root.ts";

const skip = await rootSkipReason(["/usr/sbin/losetup"]);

Deno.test({
  name: "hotplug: a loop device attached after start has a DiskStatus at once, and goes when " +
    "detached (needs root, losetup, the native addon)",
  ignore: skip !== "",
  async fn() {
    const store = new Store<ResourceSpecs>();
    let settled: () => void = () => {};
    const startScans = new Promise<void>((r) => (settled = r));
    const runtime = new ControllerRuntime(store, {
      onStats: (s: ControllerStats) => {
        // The socket opens as the runtime starts, so the first full scan follows it.
        if (s.state === "idle" && s.reconciles >= 1) settled();
      },
    });
    const discovery = new DiskDiscoveryController({
      backend: new NativeBlockBackend(),
      mounts: new NativeMountBackend(),
      uevents: new NativeUeventBackend(),
      resyncInterval: 3_600_000,
    });
    runtime.register(discovery);
    runtime.start();
    let disk: Awaited<ReturnType<typeof loopDisk>> | undefined;
    let detached = false;
    try {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        startScans,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("no start-up scan in 60 s")), WAIT_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(discovery.resyncInterval, 3_600_000, "uevents are live");
      const t0 = performance.now();
      disk = await loopDisk(8 * 1024 * 1024, "hotplug-");
      const name = disk.dev.slice("/dev/".length);
      const appeared = await waitForResource(
        store,
        DISK_STATUS,
        (r) => r.metadata.id === name && r.spec.backingFile === disk!.file,
        WAIT_MS,
      );
      const attachMs = performance.now() - t0;
      assert.equal(appeared.spec.kind, "loop");
      assert.equal(appeared.spec.size, 8 * 1024 * 1024);

      const t1 = performance.now();
      await run("losetup", "-d", disk.dev);
      detached = true;
      await waitForAbsence(store, DISK_STATUS, (r) => r.metadata.id === name, WAIT_MS);
      const detachMs = performance.now() - t1;
      for (const [event, ms] of [["attach", attachMs], ["detach", detachMs]] as const) {
        console.log(JSON.stringify({
          bench: "hotplug.disk",
          event,
          device: name,
          ms: Math.round(ms * 10) / 10,
          note: "losetup started -> DiskStatus " + (event === "attach" ? "published" : "removed"),
        }));
      }
    } finally {
      await runtime.stop();
      if (detached) await Deno.remove(disk!.dir, { recursive: true });
      else await disk?.close();
    }
  },
});
