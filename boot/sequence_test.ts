import assert from "node:assert/strict";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { runSequence, SequenceError, task } from "./sequence.ts";

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
