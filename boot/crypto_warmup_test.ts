import assert from "node:assert/strict";
import { warmCryptoOffThread } from "./crypto_warmup.ts";

const worker = (source: string) => () =>
  new Worker(`data:text/javascript,${encodeURIComponent(source)}`, { type: "module" });

Deno.test("the warm-up worker generates a key and is terminated", async () => {
  assert.equal(await warmCryptoOffThread(), "seeded");
});

Deno.test("a worker that never answers is terminated at the timeout", async () => {
  const outcome = await warmCryptoOffThread({ timeoutMs: 200, createWorker: worker("") });
  assert.equal(outcome, "timeout");
});

Deno.test("a worker that throws is a failed warm-up, not an uncaught error", async () => {
  const outcome = await warmCryptoOffThread({
    createWorker: worker('throw new Error("no crypto here");'),
  });
  assert.equal(outcome, "failed");
});

Deno.test("a worker that cannot be created is a failed warm-up", async () => {
  const outcome = await warmCryptoOffThread({
    createWorker: () => {
      throw new Deno.errors.NotCapable("no workers");
    },
  });
  assert.equal(outcome, "failed");
});
