import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { MOUNT_STATUS, type MountStatusSpec } from "../resources/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { Machined } from "../core/mod.ts";
import { followVolumes } from "./volume_hooks.ts";

function state(over: Partial<MountStatusSpec> = {}): MountStatusSpec {
  return {
    volume: "STATE",
    phase: "ready",
    mounted: true,
    source: "/dev/vdb1",
    target: "/system/state",
    filesystem: "ext4",
    flags: [],
    message: "",
    error: null,
    ...over,
  };
}

const noSupervisor = { recheck: () => {}, setLogDirectory: () => Promise.resolve() };

Deno.test("a failed post-mount hook is reported and retried with backoff until it succeeds", async () => {
  const m = new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });
  const clock = new FakeClock();
  let calls = 0;
  const stop = followVolumes(m, {
    config: {
      stateMounted: () => {
        calls++;
        return calls < 3 ? Promise.reject(new Error("EROFS")) : Promise.resolve();
      },
    },
    supervisor: noSupervisor,
    clock,
  });
  try {
    await m.store.modify(
      { type: MOUNT_STATUS, namespace: "block", id: "STATE" },
      "t",
      () => state(),
    );
    await clock.waitForSleepers(1);
    assert.deepEqual(clock.pendingDelays(), [1_000], "first retry after 1 s");
    await clock.advance(1_000);
    await clock.waitForSleepers(1);
    assert.deepEqual(clock.pendingDelays(), [2_000], "then doubling");
    await clock.advance(2_000);
    const ready = await waitForEvent(m, "ready");
    assert.equal(ready.subject, "volume STATE");
    assert.equal(calls, 3);
    const failed = m.events.history().filter((e) => e.action === "failed");
    assert.deepEqual(failed.map((e) => e.fields?.retryInMs), ["1000", "2000"]);
    assert.match(failed[0].message, /after mounting \/system\/state: EROFS/);
  } finally {
    stop();
  }
});

Deno.test("an unmounted volume stops its retries", async () => {
  const m = new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });
  const clock = new FakeClock();
  let calls = 0;
  const stop = followVolumes(m, {
    config: { stateMounted: () => (calls++, Promise.reject(new Error("EIO"))) },
    supervisor: noSupervisor,
    clock,
  });
  try {
    const ptr = { type: MOUNT_STATUS, namespace: "block", id: "STATE" } as const;
    await m.store.modify(ptr, "t", () => state());
    await clock.waitForSleepers(1);
    await m.store.modify(ptr, "t", () => state({ mounted: false, phase: "waiting" }));
    for (let i = 0; i < 20 && clock.pendingSleeps > 0; i++) await Promise.resolve();
    assert.equal(clock.pendingSleeps, 0, "the retry was cancelled");
    await clock.advance(10_000);
    assert.equal(calls, 1);
  } finally {
    stop();
  }
});

async function waitForEvent(m: Machined, action: string) {
  for (let i = 0; i < 200; i++) {
    const hit = m.events.history().find((e) => e.action === action);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no ${action} event`);
}

Deno.test("EPHEMERAL mounted: PCR 11 is closed before the held services are rechecked", async () => {
  const m = new Machined({ mode: "node", pid1: false, logger: createLogger({ console: false }) });
  const order: string[] = [];
  const stop = followVolumes(m, {
    config: { stateMounted: () => Promise.resolve() },
    supervisor: {
      recheck: () => void order.push("recheck"),
      setLogDirectory: () => Promise.resolve(),
    },
    beforeServices: async () => {
      await Promise.resolve();
      order.push("close");
    },
  });
  const dir = await Deno.makeTempDir();
  try {
    await m.store.modify(
      { type: MOUNT_STATUS, namespace: "block", id: "EPHEMERAL" },
      "t",
      () => state({ volume: "EPHEMERAL", target: dir, source: "/dev/vdb2" }),
    );
    await waitForEvent(m, "ready");
    assert.deepEqual(order, ["close", "recheck"]);
  } finally {
    stop();
    await Deno.remove(dir, { recursive: true });
  }
});
