import assert from "node:assert/strict";
import { startSntpResponder } from "./sntp_responder.ts";
import { querySntp } from "./sntp_client.ts";
import { UdpNtpTransport } from "./ntp_transport_udp.ts";

/** The offset a client with the host's clock measures from 127.0.0.1:`port`. */
async function offsetFrom(port: number): Promise<number> {
  const s = await querySntp("127.0.0.1", {
    transport: new UdpNtpTransport(),
    resolve: () => Promise.reject(new Error("unused")),
    readClock: () => BigInt(Date.now()) * 1_000_000n,
  }, { port, timeoutMs: 2000 });
  return s.offsetMs;
}

Deno.test("shared responders hold one port: the last bound answers, the other once it closes", async () => {
  const first = await startSntpResponder({ shared: true, offsetMs: 10_000 });
  const second = await startSntpResponder({ shared: true, port: first.port, offsetMs: 20_000 });
  try {
    assert.equal(second.port, first.port);
    assert.ok(Math.abs(await offsetFrom(first.port) - 20_000) < 500);
    assert.deepEqual([first.requests, second.requests], [0, 1]);
    await second.close();
    assert.ok(Math.abs(await offsetFrom(first.port) - 10_000) < 500);
    assert.deepEqual([first.requests, second.requests], [1, 1]);
  } finally {
    await first.close();
  }
});

Deno.test("a responder that does not share cannot join a shared port", async () => {
  const first = await startSntpResponder({ shared: true });
  try {
    await assert.rejects(startSntpResponder({ port: first.port }), /EADDRINUSE/);
  } finally {
    await first.close();
  }
});
