import assert from "node:assert/strict";
import { LogRing } from "./ring.ts";
import { createLogger } from "./logger.ts";

Deno.test("the ring keeps the newest lines up to its capacity", () => {
  const ring = new LogRing(3);
  for (let i = 1; i <= 5; i++) ring.push("stdout", `line ${i}`);
  assert.deepEqual(ring.tail().map((l) => l.text), ["line 3", "line 4", "line 5"]);
  assert.deepEqual(ring.tail(2).map((l) => l.text), ["line 4", "line 5"]);
  assert.deepEqual(ring.tail(0), []);
  assert.equal(ring.written, 5);
  assert.throws(() => new LogRing(0), RangeError);
});

Deno.test("read with follow yields the tail then new lines until aborted", async () => {
  const ring = new LogRing(10);
  ring.push("stdout", "old");
  const abort = new AbortController();
  const got: string[] = [];
  const reader = (async () => {
    for await (const l of ring.read({ tail: 1, follow: true, signal: abort.signal })) {
      got.push(l.text);
      if (got.length === 3) abort.abort();
    }
  })();
  await Promise.resolve();
  ring.push("stderr", "new 1");
  ring.push("stdout", "new 2");
  await reader;
  assert.deepEqual(got, ["old", "new 1", "new 2"]);
});

Deno.test("logger writes structured lines to its ring", () => {
  const logger = createLogger({ console: false });
  logger.info("boot", "mounted", { path: "/proc", note: "two words" });
  assert.equal(logger.ring.tail(1)[0].text, '[info] boot: mounted path=/proc note="two words"');
});
