import assert from "node:assert/strict";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { DeadlineError, runSequence, SequenceError, task } from "./sequence.ts";

const deps = () => ({ events: new EventBus(), logger: createLogger({ console: false }) });

Deno.test("phases run in order, tasks within a phase together, all as events", async () => {
  const d = deps();
  const order: string[] = [];
  await runSequence("boot", [
    {
      name: "one",
      tasks: [task("a", () => void order.push("a")), task("b", () => void order.push("b"))],
    },
    { name: "two", tasks: [task("c", () => void order.push("c"))] },
  ], d);
  assert.deepEqual(order, ["a", "b", "c"]);
  const kinds = d.events.history().map((e) => `${e.subject}:${e.action}`);
  assert.deepEqual(kinds, [
    "boot:started",
    "one:started",
    "a:started",
    "b:started",
    "a:done",
    "b:done",
    "one:done",
    "two:started",
    "c:started",
    "c:done",
    "two:done",
    "boot:done",
  ]);
});

Deno.test("a required task failure stops the sequence with context; optional ones do not", async () => {
  const d = deps();
  let ran = false;
  await assert.rejects(
    () =>
      runSequence("boot", [
        {
          name: "mounts",
          tasks: [
            task("optional", () => Promise.reject(new Error("meh")), { optional: true }),
            task("proc", () => Promise.reject(new Error("EPERM"))),
          ],
        },
        { name: "later", tasks: [task("never", () => void (ran = true))] },
      ], d),
    (e: unknown) => e instanceof SequenceError && e.task === "proc" && e.phase === "mounts",
  );
  assert.equal(ran, false);
  assert.ok(d.events.history().some((e) => e.subject === "optional" && e.action === "failed"));
});

Deno.test("an optional task past its deadline is reported as overran and the sequence goes on", async () => {
  const d = deps();
  const clock = new FakeClock();
  let aborted: unknown;
  let after = false;
  const done = runSequence("shutdown", [
    {
      name: "stop",
      tasks: [task("hung", (signal) =>
        new Promise<void>(() => {
          signal.addEventListener("abort", () => (aborted = signal.reason));
        }), { optional: true, deadlineMs: 5_000 })],
    },
    { name: "sync", tasks: [task("sync", () => void (after = true))] },
  ], { ...d, clock });
  await clock.waitForSleepers(1);
  await clock.advance(5_000);
  await done;
  assert.ok(after, "the next phase ran");
  assert.ok(aborted instanceof DeadlineError, "the hung task's signal was aborted");
  const overran = d.events.history().find((e) => e.action === "overran");
  assert.equal(overran?.subject, "hung");
  assert.equal(overran?.fields?.deadlineMs, "5000");
});

Deno.test("a required task past its deadline fails the sequence with a DeadlineError", async () => {
  const d = deps();
  const clock = new FakeClock();
  const done = runSequence("boot", [
    {
      name: "config",
      tasks: [task("loadConfig", () => new Promise(() => {}), { deadlineMs: 10 })],
    },
  ], { ...d, clock });
  await clock.waitForSleepers(1);
  await clock.advance(10);
  await assert.rejects(
    () => done,
    (e: unknown) =>
      e instanceof SequenceError && e.task === "loadConfig" && e.cause instanceof DeadlineError,
  );
});

Deno.test("a task that settles in time cancels its deadline (no timer left behind)", async () => {
  const d = deps();
  await runSequence("boot", [{ name: "p", tasks: [task("quick", () => {})] }], d);
  assert.ok(!d.events.history().some((e) => e.action === "overran"));
});
