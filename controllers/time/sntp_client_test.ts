import assert from "node:assert/strict";
import dgram from "node:dgram";
import { checkReply, querySntp, type SntpClientDeps } from "./sntp_client.ts";
import { FakeNtpTransport } from "./ntp_transport_fake.ts";
import { UdpNtpTransport } from "./ntp_transport_udp.ts";
import { startSntpResponder } from "./sntp_responder.ts";
import { chooseCorrection, offsetAndDelay } from "./sntp_math.ts";
import { clientRequest, encodeNtp } from "./sntp_packet.ts";
import {
  SntpKissOfDeathError,
  SntpReplyError,
  SntpResolveError,
  SntpTimeoutError,
  SntpTransportError,
} from "./sntp_error.ts";

const S = 1_000_000_000n;
const NOW_NS = 1_767_225_600_000_000_000n;

function deps(transport: SntpClientDeps["transport"], extra: Partial<SntpClientDeps> = {}) {
  return {
    transport,
    resolve: () => Promise.resolve(["192.0.2.1"]),
    readClock: () => NOW_NS,
    monotonic: () => 0,
    ...extra,
  };
}

const near = (a: bigint, b: bigint, tol = 2n) => a - b <= tol && b - a <= tol;

Deno.test("offset and delay follow RFC 5905 from the four timestamps", () => {
  // Local clock 0.625 s behind, 0.25 s round trip, server holds it 0.25 s.
  const t1 = 100n * S;
  const r = offsetAndDelay({
    t1,
    t2: t1 + 750_000_000n,
    t3: t1 + 1_000_000_000n,
    t4: t1 + 500_000_000n,
  });
  assert.equal(r.offsetNs, 625_000_000n);
  assert.equal(r.delayNs, 250_000_000n);
  // Ahead by 2 s, symmetric 40 ms path.
  const a = offsetAndDelay({
    t1,
    t2: t1 - 2n * S + 20_000_000n,
    t3: t1 - 2n * S + 20_000_000n,
    t4: t1 + 40_000_000n,
  });
  assert.equal(a.offsetNs, -2n * S);
  assert.equal(a.delayNs, 40_000_000n);
  // Jitter making the delay negative clamps it to zero.
  assert.equal(offsetAndDelay({ t1, t2: t1 + 10n, t3: t1 + 20n, t4: t1 + 5n }).delayNs, 0n);
});

Deno.test("step above the threshold or the PLL limit, slew below", () => {
  assert.equal(chooseCorrection(128_000_001n, 128), "step");
  assert.equal(chooseCorrection(-128_000_001n, 128), "step");
  assert.equal(chooseCorrection(128_000_000n, 128), "slew");
  assert.equal(chooseCorrection(-5_000_000n, 128), "slew");
  assert.equal(chooseCorrection(0n, 0), "slew");
  assert.equal(chooseCorrection(600_000_000n, 10_000), "step", "beyond ±0.5 s the PLL cannot slew");
  assert.throws(() => chooseCorrection(0n, -1), RangeError);
});

Deno.test("a reply with a known offset gives that offset", async () => {
  const transport = new FakeNtpTransport().setServer("192.0.2.1", {
    kind: "reply",
    offsetMs: 3_600_000.5,
    stratum: 1,
  });
  const s = await querySntp("192.0.2.1", deps(transport));
  assert.ok(near(s.offsetNs, 3_600_000_500_000n), String(s.offsetNs));
  assert.equal(s.delayNs, 0n);
  assert.equal(s.stratum, 1);
  assert.equal(s.reference, "LOCL");
  assert.equal(transport.exchanges.length, 1);
  assert.equal(transport.exchanges[0].port, 123);
});

Deno.test("the monotonic round trip becomes t4 and the delay", async () => {
  const transport = new FakeNtpTransport().setServer("192.0.2.1", { kind: "reply", offsetMs: 0 });
  let m = 0;
  const s = await querySntp("192.0.2.1", deps(transport, { monotonic: () => (m += 30) }));
  assert.ok(near(s.delayNs, 30_000_000n));
  assert.ok(near(s.offsetNs, -15_000_000n), "a server answering t1 sees us half the trip ahead");
});

Deno.test("a name resolves and a silent address falls through to the next", async () => {
  const transport = new FakeNtpTransport()
    .setServer("192.0.2.1", { kind: "timeout" })
    .setServer("2001:db8::1", { kind: "reply", offsetMs: -40 });
  const s = await querySntp(
    "ntp.example",
    deps(transport, { resolve: () => Promise.resolve(["192.0.2.1", "2001:db8::1"]) }),
  );
  assert.equal(s.address, "2001:db8::1");
  assert.equal(s.server, "ntp.example");
  assert.ok(near(s.offsetNs, -40_000_000n));
});

Deno.test("every address silent: the timeout names the server and address", async () => {
  const transport = new FakeNtpTransport();
  await assert.rejects(querySntp("192.0.2.9", deps(transport), { timeoutMs: 50 }), (e) => {
    assert.ok(e instanceof SntpTimeoutError);
    assert.equal(e.server, "192.0.2.9");
    assert.equal(e.address, "192.0.2.9");
    assert.equal(e.timeoutMs, 50);
    return true;
  });
});

Deno.test("resolution failures and socket errors are typed, with their cause", async () => {
  const dnsDown = new Error("no route to resolver");
  await assert.rejects(
    querySntp(
      "ntp.example",
      deps(new FakeNtpTransport(), { resolve: () => Promise.reject(dnsDown) }),
    ),
    (e) => e instanceof SntpResolveError && e.cause === dnsDown && /ntp\.example/.test(e.message),
  );
  const refused = new Error("ENETUNREACH");
  const transport = new FakeNtpTransport().setServer("192.0.2.1", {
    kind: "socket-error",
    error: refused,
  });
  await assert.rejects(
    querySntp("192.0.2.1", deps(transport)),
    (e) => e instanceof SntpTransportError && e.cause === refused,
  );
});

Deno.test("kiss-of-death codes are reported; DENY and RSTR are fatal, RATE is not", async () => {
  for (const [code, fatal] of [["RATE", false], ["DENY", true], ["RSTR", true]] as const) {
    const transport = new FakeNtpTransport().setServer("192.0.2.1", { kind: "reply", kiss: code });
    await assert.rejects(querySntp("192.0.2.1", deps(transport)), (e) => {
      assert.ok(e instanceof SntpKissOfDeathError);
      assert.equal(e.code, code);
      assert.equal(e.fatal, fatal);
      return true;
    });
  }
});

Deno.test("a kiss code stops the query at once: other addresses are not asked", async () => {
  const transport = new FakeNtpTransport()
    .setServer("192.0.2.1", { kind: "reply", kiss: "RATE" })
    .setServer("192.0.2.2", { kind: "reply" });
  await assert.rejects(
    querySntp(
      "pool.example",
      deps(transport, { resolve: () => Promise.resolve(["192.0.2.1", "192.0.2.2"]) }),
    ),
    SntpKissOfDeathError,
  );
  assert.equal(transport.exchangesWith("192.0.2.2").length, 0);
});

Deno.test("unusable replies are refused with the reason", async () => {
  const cases = [
    [{ kind: "reply", wrongOrigin: true }, /origin timestamp/],
    [{ kind: "reply", unsynchronised: true }, /leap indicator 3/],
    [{ kind: "reply", stratum: 16 }, /stratum 16/],
    [{ kind: "reply", kiss: "RATE", wrongOrigin: true }, /origin timestamp/],
    [{ kind: "raw", bytes: new Uint8Array(12) }, /shorter than 48/],
    [{ kind: "raw", bytes: encodeNtp(clientRequest(1n)) }, /mode 3/],
  ] as const;
  for (const [behaviour, reason] of cases) {
    const transport = new FakeNtpTransport().setServer("192.0.2.1", behaviour);
    await assert.rejects(querySntp("192.0.2.1", deps(transport)), (e) => {
      assert.ok(e instanceof SntpReplyError, `${JSON.stringify(behaviour)}: ${e}`);
      assert.match(e.message, reason);
      return true;
    });
  }
});

Deno.test("checkReply refuses a zero transmit timestamp", () => {
  const reply = {
    ...clientRequest(0n),
    mode: 4,
    stratum: 2,
    originTimestamp: 7n,
    receiveTimestamp: 1n,
  };
  assert.throws(() => checkReply("s", "a", 7n, reply), /transmit timestamp is zero/);
});

Deno.test("over UDP on loopback: the TS responder's offset is measured", async () => {
  const serverNow = Date.UTC(2026, 5, 1);
  const responder = await startSntpResponder({ offsetMs: 1500, now: () => serverNow });
  try {
    const localNs = BigInt(serverNow) * 1_000_000n;
    const s = await querySntp("127.0.0.1", {
      transport: new UdpNtpTransport(),
      resolve: () => Promise.reject(new Error("unused")),
      readClock: () => localNs,
    }, { port: responder.port, timeoutMs: 2000 });
    // Both clocks stand still, so offset = 1500 ms − half the measured round trip, exactly.
    assert.ok(Math.abs(s.offsetMs - (1500 - s.delayMs / 2)) < 1e-3, `${s.offsetMs} ${s.delayMs}`);
    assert.ok(s.delayMs >= 0 && s.delayMs < 1000, `delay ${s.delayMs} ms`);
    assert.equal(responder.requests, 1);

    responder.behaviour = { kiss: "DENY" };
    await assert.rejects(
      querySntp("127.0.0.1", {
        transport: new UdpNtpTransport(),
        resolve: () => Promise.reject(new Error("unused")),
        readClock: () => localNs,
      }, { port: responder.port }),
      (e) => e instanceof SntpKissOfDeathError && e.code === "DENY",
    );
  } finally {
    await responder.close();
  }
});

Deno.test("over UDP: a port that never answers times out and closes its socket", async () => {
  const silent = dgram.createSocket("udp4");
  await new Promise<void>((r) => silent.bind(0, "127.0.0.1", r));
  try {
    const started = performance.now();
    const reply = await new UdpNtpTransport().exchange(
      "127.0.0.1",
      silent.address().port,
      encodeNtp(clientRequest(1n)),
      { timeoutMs: 150 },
    );
    assert.equal(reply, null);
    assert.ok(performance.now() - started >= 140);
  } finally {
    await new Promise<void>((r) => silent.close(() => r()));
  }
});

Deno.test("over UDP: an abort ends the exchange with the signal's reason", async () => {
  const silent = dgram.createSocket("udp4");
  await new Promise<void>((r) => silent.bind(0, "127.0.0.1", r));
  try {
    const abort = new AbortController();
    const p = new UdpNtpTransport().exchange(
      "127.0.0.1",
      silent.address().port,
      encodeNtp(clientRequest(1n)),
      { timeoutMs: 5000, signal: abort.signal },
    );
    abort.abort(new Error("stopping"));
    await assert.rejects(p, /stopping/);
  } finally {
    await new Promise<void>((r) => silent.close(() => r()));
  }
});
