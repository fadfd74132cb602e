/**
 * A client that stops reading a Watch, end to end through apid: apid's send
 * gate holds the stream, its buffer fills and stalls, and when the client
 * reads again it gets what was sent before the stall, then the explicit
 * overflow marker and the end of the stream; machined's store watch is
 * released. (ResourceExhausted itself is asserted in stream_buffer_test.ts:
 * this raw client does not decode HPACK trailers.)
 */
import { equal, ok } from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { WatchRequestSchema, WatchResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import { startApiFixture, withTimeout } from "../testing.ts";
import { connectRawH2, grpcMessages } from "./testdata/raw_h2_client.ts";
import { testEdgeKind } from "../edge/testing.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean): Promise<void> {
  await withTimeout(
    (async () => {
      while (!cond()) await sleep(10);
    })(),
    10_000,
    what,
  );
}

Deno.test({
  name:
    "apid: a Watch the client stops reading ends with the overflow marker, and machined's watch is released (the Deno apid's stream buffer; machined-edge holds the stream back by HTTP/2 flow control instead)",
  ignore: testEdgeKind() === "rust",
}, async () => {
  const f = await startApiFixture({
    maxUnsentBytes: 4096,
    streamBuffer: { maxMessages: 4, maxBytes: 64 * 1024, stallMs: 300 },
  });
  const reader = f.pki.clients["os:reader"];
  const raw = await connectRawH2({
    host: "127.0.0.1",
    port: f.apid.port,
    ca: f.pki.ca.certPem,
    cert: reader.certPem,
    key: reader.keyPem,
  });
  try {
    const request = toBinary(
      WatchRequestSchema,
      create(WatchRequestSchema, { type: "ControllerStatus", namespace: "runtime" }),
    );
    const id = raw.open("/machined.v1.MachineService/Watch", request);
    await until("watch open", () => f.store.watchCount === 1);
    const ptr = {
      type: "ControllerStatus" as const,
      namespace: "runtime",
      id: "time.SyncController",
    };
    const filler = "x".repeat(4096);
    for (let i = 0; i < 300; i++) {
      await f.store.modify(ptr, "test", (s) => ({ ...s!, lastError: `${i} ${filler}` }));
      if (i % 10 === 9) await sleep(1);
    }
    await until("store watch released", () => f.store.watchCount === 0);
    raw.grant(64 * 1024 * 1024); // the client reads again
    const s = raw.streams.get(id)!;
    await until("stream ended", () => s.ended);
    equal(s.resetCode, undefined, "ended with trailers, not reset");
    const kinds = grpcMessages(s.data).map((m) => fromBinary(WatchResponseSchema, m).event.case);
    equal(kinds.at(-1), "overflow", kinds.join(","));
    ok(kinds.length < 300, `the client got ${kinds.length} messages, not every update`);
  } finally {
    raw.close();
    await f.close();
  }
});
