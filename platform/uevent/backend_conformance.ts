/**
 * One suite both uevent backends pass: the fake always, the native one as
 * root with loop devices making the kernel speak. The native host may emit
 * other uevents meanwhile (other disks, other tests), so cases look for their
 * own device's events and never count the rest.
 * @module
 */
import assert from "node:assert/strict";
import type { Uevent, UeventBackend, UeventSubscription } from "./backend.ts";

/** What a backend under test provides. */
export interface UeventFixture {
  backend: UeventBackend;
  /** Make the kernel send at least one block `change` uevent; returns that device's DEVPATH. */
  trigger(): Promise<string>;
  /** Make the kernel send at least `n` uevents, quickly. */
  flood(n: number): Promise<void>;
  cleanup(): Promise<void>;
}

/** A bounded wait for a batch event matching `pred`; every batch is passed to `seen`. */
async function waitFor(
  sub: UeventSubscription,
  pred: (e: Uevent) => boolean,
  timeoutMs = 10_000,
): Promise<Uevent> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const b = await sub.next(Math.max(1, deadline - performance.now()));
    if (!b) break;
    const hit = b.events.find(pred);
    if (hit) return hit;
  }
  throw new Error(`no matching uevent within ${timeoutMs} ms`);
}

/** The cases, each taking a fresh fixture. */
export const ueventConformanceCases: Record<string, (f: UeventFixture) => Promise<void>> = {
  "a kernel event after subscribing arrives parsed": async (f) => {
    const sub = f.backend.subscribe();
    try {
      const devpath = await f.trigger();
      const ev = await waitFor(sub, (e) => e.devpath === devpath);
      assert.equal(ev.subsystem, "block");
      assert.equal(ev.action, "change");
      assert.equal(ev.vars.ACTION, ev.action);
      assert.equal(ev.vars.DEVPATH, ev.devpath);
      assert.equal(ev.devname, devpath.slice(devpath.lastIndexOf("/") + 1));
      assert.equal(ev.devtype, "disk");
      assert.equal(typeof ev.seqnum, "number");
      assert.ok(sub.counters().received >= 1);
    } finally {
      sub.close();
    }
  },
  "a timeout is an empty batch; close resolves a pending next with undefined": async (f) => {
    const sub = f.backend.subscribe();
    const quiet = await sub.next(1);
    assert.ok(quiet && quiet.dropped === 0);
    const pending = sub.next(30_000);
    sub.close();
    assert.equal(await pending, undefined);
    assert.equal(await sub.next(10), undefined);
    sub.close(); // idempotent
  },
  "a flood past the capacity is dropped, counted, and asks for a resync": async (f) => {
    const sub = f.backend.subscribe({ capacity: 2 });
    try {
      await f.flood(40);
      let resync = false, dropped = 0, most = 0;
      const deadline = performance.now() + 10_000;
      while (!resync && performance.now() < deadline) {
        const b = await sub.next(1_000);
        if (!b) break;
        resync ||= b.resync;
        dropped += b.dropped;
        most = Math.max(most, b.events.length);
      }
      assert.ok(resync, "no batch asked for a resync");
      assert.ok(dropped > 0 && sub.counters().dropped >= dropped);
      assert.ok(most <= 2, `a batch held ${most} events past the capacity of 2`);
    } finally {
      sub.close();
    }
  },
};

/** Registers every case with Deno.test. */
export function ueventBackendConformance(
  label: string,
  make: () => Promise<UeventFixture>,
  options: { ignore?: boolean } = {},
): void {
  for (const [name, run] of Object.entries(ueventConformanceCases)) {
    Deno.test({
      name: `${label}: ${name}`,
      ignore: options.ignore,
      async fn() {
        const f = await make();
        try {
          await run(f);
        } finally {
          await f.cleanup();
        }
      },
    });
  }
}
