/**
 * Rotation on a config change through the block controllers, on fakes: the
 * new key is added and proven before the old slot is removed, and a rotation
 * cut between its phases resumes on the next boot (proving first).
 */
import assert from "node:assert/strict";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  VOLUME_STATUS,
  type VolumeStatusSpec,
} from "../../resources/mod.ts";
import type { Store } from "../../runtime/mod.ts";
import {
  boot,
  config,
  encrypted,
  newMachine,
  PLAIN,
  provisionEncrypted,
} from "./testing_encryption.ts";
import type { Machine } from "./testing_encryption.ts";

const NEW = "the next recovery passphrase";
const STATE = "/dev/vda2";
const rotated = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: nodeid }
          - { slot: 2, kind: static, passphrase: "${NEW}" }
      ephemeral:
        keys:
          - { slot: 0, kind: nodeid }
`;
const ptr = { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID } as const;

async function slots(m: Machine): Promise<number[]> {
  return (await m.crypt.dump(STATE)).slots.map((s) => s.slot);
}

async function eventually(what: string, fn: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every rotation phase STATE's VolumeStatus showed, in order, until `signal` aborts. */
function rotationPhases(store: Store<ResourceSpecs>, signal: AbortSignal): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const ev of store.watch(VOLUME_STATUS, { signal })) {
      if (ev.kind !== "created" && ev.kind !== "updated") continue;
      if (ev.resource.metadata.id !== "STATE") continue;
      const phase = ev.resource.spec.rotation?.phase ?? "";
      if (phase !== (seen.at(-1) ?? "")) seen.push(phase);
    }
  })().catch(() => {});
  return seen;
}

function stateStatus(store: Store<ResourceSpecs>): VolumeStatusSpec | undefined {
  return store.get(VOLUME_STATUS, "block", "STATE")?.spec;
}

Deno.test("a changed static key: added and proven in slot 2, then slot 1 removed; an event says so", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const n = await boot(m, encrypted());
  const watching = new AbortController();
  try {
    await n.mounted("STATE");
    const phases = rotationPhases(n.store, watching.signal);
    await n.store.modify(ptr, "test", () => ({ source: "test", config: config(rotated) }));
    await eventually("the rotation", async () => (await slots(m)).join() === "0,2");
    // VolumeStatus showed each phase while it ran, then the header's new slots, all proven.
    await eventually(
      "the status",
      () => stateStatus(n.store)?.keySlots.map((k) => k.slot).join() === "0,2",
    );
    assert.deepEqual(stateStatus(n.store)?.keySlots, [
      { slot: 0, kind: "nodeid", proven: true },
      { slot: 2, kind: "static", proven: true },
    ]);
    assert.equal(stateStatus(n.store)?.rotation, null);
    assert.deepEqual(phases, ["adding", "proving", "removing", ""]);
    const ev = n.events.history().filter((e) => e.action === "rotated");
    assert.equal(ev.length, 1);
    assert.match(ev[0].message, /added 2, proven 2, removed 1/);
    assert.doesNotMatch(JSON.stringify(n.events.history()), new RegExp(NEW));
    const killedAfterProof = m.crypt.faults.calls.map((c) => c.op)
      .filter((op) => ["addKey", "testKey", "killSlot"].includes(op)).slice(-3);
    assert.deepEqual(killedAfterProof, ["addKey", "testKey", "killSlot"]);
    assert.equal(await m.crypt.testKey(STATE, new TextEncoder().encode(NEW), 2), true);
  } finally {
    watching.abort();
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a rotation cut between its phases keeps the old slot, and the next boot proves the new one before removing it", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const first = await boot(m, encrypted());
  try {
    await first.mounted("STATE");
    m.crypt.faults.failAlways("killSlot", "EIO"); // power is lost before any kill
    await first.store.modify(ptr, "test", () => ({ source: "test", config: config(rotated) }));
    await eventually(
      "the cut",
      () => first.events.history().some((e) => e.action === "rotation-stopped"),
    );
    assert.deepEqual(await slots(m), [0, 1, 2], "phase 1 done, the old slot kept");
    await eventually(
      "the stopped rotation in the status",
      () => stateStatus(first.store)?.rotation?.phase === "stopped",
    );
    assert.match(stateStatus(first.store)?.rotation?.message ?? "", /cut short.*resumes/);
  } finally {
    await first.shutdown();
    m.crypt.faults.clear();
  }
  const next = await boot(m, rotated);
  try {
    await next.mounted("STATE");
    await eventually("the resumed rotation", async () => (await slots(m)).join() === "0,2");
    const ev = next.events.history().find((e) => e.action === "rotated");
    assert.match(ev?.message ?? "", /added none, proven 2, removed 1/);
    await eventually(
      "the finished rotation in the status",
      () =>
        stateStatus(next.store)?.rotation === null &&
        stateStatus(next.store)?.keySlots.map((k) => `${k.slot}${k.proven}`).join() ===
          "0true,2true",
    );
  } finally {
    await next.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});
