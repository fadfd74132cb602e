import { deepEqual, equal, ok } from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { boundedStream } from "./stream_buffer.ts";

/** A source that yields `n` numbers as fast as it is pulled, counting pulls. */
function counting(n: number) {
  const state = { pulled: 0, returned: false };
  const source = (async function* () {
    try {
      for (let i = 0; i < n; i++) {
        state.pulled++;
        yield i;
        await Promise.resolve();
      }
    } finally {
      state.returned = true;
    }
  })();
  return { source, state };
}

Deno.test("boundedStream: a reading client gets every message in order", async () => {
  const { source } = counting(100);
  const got: number[] = [];
  for await (const m of boundedStream(source, { sizeOf: () => 10, cancelUpstream: () => {} })) {
    got.push(m);
  }
  deepEqual(got, Array.from({ length: 100 }, (_, i) => i));
});

Deno.test("boundedStream: stops reading upstream while full, then overflows with the marker and ResourceExhausted", async () => {
  const { source, state } = counting(1_000_000);
  let cancelled = 0;
  let overflowed = 0;
  const stream = boundedStream(source, {
    maxMessages: 4,
    maxBytes: 1024,
    stallMs: 50,
    sizeOf: () => 100,
    overflowMarker: (dropped) => -dropped,
    onOverflow: () => overflowed++,
    cancelUpstream: () => cancelled++,
  });
  equal((await stream.next()).value, 0);
  // The client stops reading: the pump fills the queue and waits.
  await new Promise((r) => setTimeout(r, 20));
  ok(state.pulled <= 6, `pulled ${state.pulled}`);
  await new Promise((r) => setTimeout(r, 80));
  equal(overflowed, 1);
  ok(cancelled >= 1);
  equal((await stream.next()).value, -4); // the marker: 4 queued messages dropped
  try {
    await stream.next();
    throw new Error("expected ResourceExhausted");
  } catch (e) {
    equal((e as ConnectError).code, Code.ResourceExhausted, String(e));
  }
  ok(state.returned);
});

Deno.test("boundedStream: the byte bound admits one large message at a time", async () => {
  const { source, state } = counting(10);
  const stream = boundedStream(source, {
    maxMessages: 100,
    maxBytes: 1000,
    stallMs: 10_000,
    sizeOf: () => 5000,
    cancelUpstream: () => {},
  });
  equal((await stream.next()).value, 0);
  await new Promise((r) => setTimeout(r, 20));
  ok(state.pulled <= 3, `pulled ${state.pulled}`);
  await stream.return(undefined);
  ok(state.returned);
});

Deno.test("boundedStream: an upstream error reaches the client after the queued messages", async () => {
  const source = (async function* () {
    yield 1;
    throw new ConnectError("machined went away", Code.Unavailable);
  })();
  const got: number[] = [];
  try {
    for await (const m of boundedStream(source, { sizeOf: () => 1, cancelUpstream: () => {} })) {
      got.push(m);
    }
    throw new Error("expected Unavailable");
  } catch (e) {
    equal((e as ConnectError).code, Code.Unavailable);
  }
  deepEqual(got, [1]);
});
