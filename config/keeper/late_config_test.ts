/**
 * How long the late config sources wait for STATE (config/keeper/late_config.ts):
 * once disk discovery's first full scan is in the store, a STATE that is on no
 * disk is not waited for (a fresh node's first boot, every boot after a reset).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderConfigTemplate } from "../mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { lateConfigPlan } from "./config_sources.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { runLateConfig } from "./late_config.ts";
import { Machined } from "../../core/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import type { DiscoveredVolumeSpec } from "../../resources/mod.ts";

const CIDATA: DiscoveredVolumeSpec = {
  disk: "vdb",
  devicePath: "/dev/vdb",
  partitionNumber: 0,
  offset: 0,
  size: 1 << 20,
  partitionType: "",
  partitionUuid: "",
  partitionLabel: "",
  role: "other",
  filesystem: "vfat",
  filesystemLabel: "CIDATA",
  filesystemUuid: "",
  inKernel: true,
};

/** Runs the late sources over one CIDATA drive, no STATE; `scanned` as discovery would. */
async function cidataOnly(scanned: Promise<void> | undefined, cidataWaitMs: number) {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const dir = await Deno.makeTempDir({ prefix: "machined-late-" });
  try {
    await Deno.writeTextFile(join(dir, "user-data"), renderConfigTemplate({ hostname: "ci" }));
    m.store.create({
      type: "DiscoveredVolume",
      namespace: "block",
      id: "vdb",
      owner: "test",
      spec: CIDATA,
    });
    const keeper = new ConfigKeeper(m);
    let stateChecked = -1;
    const start = performance.now();
    const from = await runLateConfig({
      machined: m,
      keeper,
      plan: lateConfigPlan(new Map()),
      mount: new FakeMountBackend().addDirectory(dir),
      cidataDir: dir,
      cidataWaitMs,
      ...(scanned ? { disksScanned: scanned } : {}),
      onStateChecked: () => stateChecked < 0 && (stateChecked = performance.now() - start),
    });
    return { from, hostname: keeper.config?.machine.hostname, stateCheckedMs: stateChecked };
  } finally {
    await Deno.remove(dir, { recursive: true });
    await m.stop();
  }
}

Deno.test("late config: after discovery's first full scan, a STATE on no disk is not waited for; CIDATA is read", async () => {
  // The window would hold STATE's lookup for a minute; the scan ends it.
  const r = await cidataOnly(Promise.resolve(), 60_000);
  assert.deepEqual([r.from, r.hostname], ["CIDATA volume /dev/vdb", "ci"]);
  assert.ok(r.stateCheckedMs < 30_000, `STATE looked for in ${r.stateCheckedMs} ms`);
});

Deno.test("late config: until the scan is in, STATE's window is waited out before CIDATA", async () => {
  const never = new Promise<void>(() => {});
  const r = await cidataOnly(never, 300);
  assert.deepEqual([r.from, r.hostname], ["CIDATA volume /dev/vdb", "ci"]);
  assert.ok(r.stateCheckedMs >= 300, `STATE looked for after only ${r.stateCheckedMs} ms`);
});
