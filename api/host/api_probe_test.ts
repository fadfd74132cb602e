/**
 * The readiness probe's loop on a fake clock and fake calls: an answer ends
 * it, failures are retried with the wait between, the deadline ends it with
 * the last reason, an attempt never outlives the deadline, nothing is dialled
 * before there is an address or before the certificate served names it; and
 * the choice of the address a client dials.
 */
import { deepEqual, equal } from "node:assert/strict";
import {
  type ApiProbeDeps,
  chooseProbeAddress,
  endpointOf,
  normalizeSerial,
  probeApi,
  servedAddress,
} from "./api_probe.ts";

/** A fake clock that moves only when slept on or when a call takes time. */
function fakeClock() {
  let t = 1000;
  return {
    now: () => t,
    sleep: (ms: number) => (t += ms, Promise.resolve()),
    advance: (ms: number) => (t += ms),
  };
}

Deno.test("the probe retries until a call is answered and reports attempts, address and time", async () => {
  const clock = fakeClock();
  const calls: Array<[string, number]> = [];
  const result = await probeApi(
    {
      ...clock,
      address: () => "10.0.2.15",
      call: (address, timeoutMs) => {
        calls.push([address, timeoutMs]);
        clock.advance(100);
        return calls.length < 3
          ? Promise.reject(new Error("certificate not for 10.0.2.15"))
          : Promise.resolve();
      },
    } satisfies ApiProbeDeps,
    { retryMs: 250, deadlineMs: 10_000, attemptTimeoutMs: 2_000 },
  );
  equal(result.outcome, "ok");
  equal(result.attempts, 3);
  equal(result.address, "10.0.2.15");
  equal(result.lastError, undefined);
  equal(result.ms, 3 * 100 + 2 * 250);
  deepEqual(calls.map((c) => c[1]), [2_000, 2_000, 2_000]);
});

Deno.test("the probe gives up at its deadline with the last reason, an attempt bounded by what is left", async () => {
  const clock = fakeClock();
  const timeouts: number[] = [];
  const result = await probeApi({
    ...clock,
    address: () => "127.0.0.1",
    call: (_a, timeoutMs) => {
      timeouts.push(timeoutMs);
      clock.advance(timeoutMs);
      return Promise.reject(new Error(`timed out after ${timeoutMs} ms`));
    },
  }, { retryMs: 500, deadlineMs: 5_000, attemptTimeoutMs: 2_000 });
  equal(result.outcome, "timeout");
  equal(result.ms, 5_000);
  // 0-2000, wait to 2500, 2500-4500, wait to 5000: deadline.
  deepEqual(timeouts, [2_000, 2_000]);
  equal(result.lastError, "timed out after 2000 ms");
  equal(result.attempts, 2);
});

Deno.test("the probe dials nothing while there is no address, and says so at its deadline", async () => {
  const clock = fakeClock();
  const seen: number[] = [];
  let called = 0;
  const result = await probeApi({
    ...clock,
    address: (elapsed) => (seen.push(elapsed), undefined),
    call: () => (called++, Promise.resolve()),
  }, { lookMs: 1_000, retryMs: 5, deadlineMs: 3_000 });
  equal(result.outcome, "timeout");
  equal(called, 0);
  equal(result.attempts, 0);
  equal(result.address, undefined);
  equal(result.lastError, "no address to dial yet");
  deepEqual(seen, [0, 1_000, 2_000]);
});

Deno.test("the probe dials the address once one appears", async () => {
  const clock = fakeClock();
  const dialled: string[] = [];
  const result = await probeApi({
    ...clock,
    address: (elapsed) => (elapsed >= 2_000 ? "10.0.2.15" : undefined),
    call: (a) => (dialled.push(a), Promise.resolve()),
  }, { lookMs: 1_000, retryMs: 5, deadlineMs: 10_000 });
  equal(result.outcome, "ok");
  deepEqual(dialled, ["10.0.2.15"]);
  equal(result.ms, 2_000);
});

Deno.test("the probe waits for what its target names, looking again each lookMs, and says so at its deadline", async () => {
  const clock = fakeClock();
  const dialled: string[] = [];
  const waiting = { waitingFor: "the served certificate to name 10.0.2.15" };
  const named = await probeApi({
    ...clock,
    address: (elapsed) => (elapsed >= 150 ? "10.0.2.15" : waiting),
    call: (a) => (dialled.push(a), Promise.resolve()),
  }, { lookMs: 50, retryMs: 1_000, deadlineMs: 10_000 });
  equal(named.outcome, "ok");
  equal(named.ms, 150); // looked at 0, 50, 100, 150: no retry wait while nothing was dialled
  deepEqual(dialled, ["10.0.2.15"]);

  const never = await probeApi({
    ...clock,
    address: () => waiting,
    call: () => Promise.resolve(),
  }, { lookMs: 50, deadlineMs: 500 });
  equal(never.outcome, "timeout");
  equal(never.attempts, 0);
  equal(never.lastError, "waiting for the served certificate to name 10.0.2.15");
});

const addr = (address: string, family: "inet" | "inet6" = "inet", scope = "global") => ({
  address,
  family,
  scope,
});

Deno.test("a wildcard listen is probed on the node's first routable address, IPv4 first", () => {
  equal(
    chooseProbeAddress("0.0.0.0", [
      addr("127.0.0.1", "inet", "host"),
      addr("fe80::1", "inet6", "link"),
      addr("2001:db8::5", "inet6"),
      addr("10.0.2.15"),
    ], false),
    "10.0.2.15",
  );
  equal(chooseProbeAddress("::", [addr("2001:db8::5", "inet6")], false), "2001:db8::5");
});

Deno.test("0.0.0.0 listens on IPv4 only: a SLAAC address that came first is not probed (it never answers)", () => {
  const slaacFirst = [addr("fd99::5054:ff:fe6d:6101", "inet6")];
  equal(chooseProbeAddress("0.0.0.0", slaacFirst, false), undefined, "wait for an IPv4 address");
  equal(chooseProbeAddress("0.0.0.0", [...slaacFirst, addr("10.99.0.57")], false), "10.99.0.57");
  equal(chooseProbeAddress("::", slaacFirst, false), "fd99::5054:ff:fe6d:6101");
});

Deno.test("with no routable address the probe waits, then dials loopback once the grace is over", () => {
  const onlyLocal = [addr("127.0.0.1", "inet", "host"), addr("fe80::1", "inet6", "link")];
  equal(chooseProbeAddress("0.0.0.0", onlyLocal, false), undefined);
  equal(chooseProbeAddress("0.0.0.0", onlyLocal, true), "127.0.0.1");
  equal(chooseProbeAddress("::", [], true), "::1");
});

Deno.test("a specific listen host is probed as it is", () => {
  equal(chooseProbeAddress("192.0.2.7", [addr("10.0.2.15")], false), "192.0.2.7");
});

Deno.test("endpoints put IPv6 in brackets; serials compare without case or leading zeros", () => {
  equal(endpointOf("10.0.2.15", 50000), "10.0.2.15:50000");
  equal(endpointOf("2001:db8::5", 50000), "[2001:db8::5]:50000");
  equal(normalizeSerial("00A1b2"), normalizeSerial("a1B2"));
  equal(normalizeSerial("0"), "0");
});

Deno.test("servedAddress dials an address the served certificate names, in any text form", () => {
  equal(servedAddress("10.0.2.15", ["127.0.0.1", "10.0.2.15"]), "10.0.2.15");
  equal(servedAddress("fd00::5", ["FD00:0:0:0:0:0:0:5"]), "fd00::5");
  deepEqual(servedAddress("10.0.2.15", ["127.0.0.1", "::1"]), {
    waitingFor: "the served certificate to name 10.0.2.15",
  });
  equal(servedAddress(undefined, ["10.0.2.15"]), undefined);
  equal(servedAddress("10.0.2.15", undefined), "10.0.2.15"); // names unknown: dialled as it is
});
