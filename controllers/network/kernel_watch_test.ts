import assert from "node:assert/strict";
import type { NetworkBackend, NetworkSubscription } from "../../platform/network/mod.ts";
import { LINK_STATUS } from "../../resources/mod.ts";
import { kernelWatchController } from "./kernel_watch.ts";

/** A backend whose subscriptions fail on the first read, with EIO (not a lost-events ENOBUFS). */
function brokenSubscriptions() {
  const opened: Array<{ closed: boolean }> = [];
  const backend = {
    subscribe(): NetworkSubscription {
      const state = { closed: false };
      opened.push(state);
      return {
        nextEvent: () => Promise.reject(Object.assign(new Error("recv: EIO"), { code: "EIO" })),
        close: () => (state.closed = true),
        [Symbol.asyncIterator]: () => assert.fail("not iterated"),
      };
    },
  } as unknown as NetworkBackend;
  return { backend, opened };
}

Deno.test("kernelWatchController: a failed socket is closed and the next watch opens a fresh one", async () => {
  const { backend, opened } = brokenSubscriptions();
  const c = kernelWatchController({
    name: "network.TestStatus",
    output: LINK_STATUS,
    groups: ["link"],
    backend,
    read: () => Promise.resolve([]),
  });
  const signal = new AbortController().signal;
  await assert.rejects(c.watch!(() => {}, signal), /EIO/);
  await assert.rejects(c.watch!(() => {}, signal), /EIO/);
  assert.equal(opened.length, 2, "the runtime's restart subscribes again");
  assert.ok(opened.every((s) => s.closed), "no socket is left open");
});
