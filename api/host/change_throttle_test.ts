import assert from "node:assert/strict";
import { ChangeThrottle, type ThrottleTimers } from "./change_throttle.ts";

/** Timers driven by hand: `advance(ms)` fires what is due, in order. */
function manualTimers(): ThrottleTimers & { advance(ms: number): void; armed(): number } {
  let now = 0;
  let next = 1;
  const due = new Map<number, { at: number; fn: () => void }>();
  return {
    setTimeout(fn, ms) {
      const id = next++;
      due.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(h) {
      due.delete(h as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const first = [...due.entries()].filter(([, t]) => t.at <= until)
          .sort((a, b) => a[1].at - b[1].at)[0];
        if (!first) break;
        due.delete(first[0]);
        now = first[1].at;
        first[1].fn();
      }
      now = until;
    },
    armed: () => due.size,
  };
}

Deno.test("the first change acts at once; a burst after it acts once, at the window's end", () => {
  const timers = manualTimers();
  let acted = 0;
  const t = new ChangeThrottle(() => acted++, 1000, timers);
  t.changed();
  assert.equal(acted, 1, "no wait after a quiet spell");
  timers.advance(300);
  t.changed();
  timers.advance(300);
  t.changed();
  assert.equal(acted, 1);
  assert.ok(t.pending);
  timers.advance(400);
  assert.equal(acted, 2, "the burst coalesced into one action, one window after the first");
  timers.advance(1000);
  assert.equal(acted, 2, "nothing pending, nothing done");
  assert.equal(timers.armed(), 0, "quiet again: no timer left");
  t.changed();
  assert.equal(acted, 3);
});

Deno.test("a steady stream of changes acts once per window, never postponed", () => {
  const timers = manualTimers();
  let acted = 0;
  const t = new ChangeThrottle(() => acted++, 1000, timers);
  for (let i = 0; i < 50; i++) {
    t.changed();
    timers.advance(100);
  }
  // A change every 100 ms for 5 s: at 0 ms at once, then at the end of each window (1 000 …
  // 5 000 ms), each with changes pending.
  assert.equal(acted, 6);
});

Deno.test("stop drops a pending action and the timer", () => {
  const timers = manualTimers();
  let acted = 0;
  const t = new ChangeThrottle(() => acted++, 1000, timers);
  t.changed();
  t.changed();
  t.stop();
  assert.equal(timers.armed(), 0);
  timers.advance(5000);
  t.changed();
  assert.equal(acted, 1);
});
