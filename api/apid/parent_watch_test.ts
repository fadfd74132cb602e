import assert from "node:assert/strict";
import { watchParent } from "./parent_watch.ts";

Deno.test("watchParent: fires once when the parent pid changes (re-parented), not before", async () => {
  let parent = 4242;
  let gone = 0;
  const stop = watchParent(() => gone++, { intervalMs: 5, ppid: () => parent });
  try {
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(gone, 0, "same parent: nothing happens");
    parent = 1;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(gone, 1, "re-parented: onGone once");
  } finally {
    stop();
  }
});
