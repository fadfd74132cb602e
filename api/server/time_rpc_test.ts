import { deepEqual, equal, match } from "node:assert/strict";
import { Code, type ConnectError } from "@connectrpc/connect";
import { seededStore, seedTimeServers, startApiFixture } from "../testing.ts";
import type { TimeQuerier } from "./time_query.ts";
import { createTokenBucket } from "./time_query.ts";

/** A querier that records the hosts it was asked and answers at once. */
function recordingQuerier(): TimeQuerier & { hosts: string[] } {
  const hosts: string[] = [];
  return {
    hosts,
    query(host) {
      hosts.push(host);
      return Promise.resolve({
        server: host,
        address: "192.0.2.1",
        stratum: 2,
        offsetMs: 12.5,
        delayMs: 0.4,
      });
    },
  };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(() => "ok", (e: ConnectError) => `${Code[e.code]}: ${e.rawMessage}`);

Deno.test("Time: the status alone; a named server measured on port 123 only", async () => {
  const querier = recordingQuerier();
  const f = await startApiFixture({ timeQuerier: querier });
  try {
    const plain = await f.client().api.time({});
    equal(plain.query, undefined);
    const r = await f.client().api.time({ server: "[2001:db8::1]:123" });
    equal(r.query?.offsetMs, 12.5);
    equal(r.query?.server, "[2001:db8::1]:123");
    deepEqual(querier.hosts, ["2001:db8::1"]);
    match(
      await codeOf(f.client().api.time({ server: "ntp.example:1123" })),
      /^InvalidArgument: .*port 123 only/,
    );
    match(await codeOf(f.client().api.time({ server: "a b" })), /^InvalidArgument/);
    deepEqual(querier.hosts, ["2001:db8::1"]);
  } finally {
    await f.close();
  }
});

Deno.test("Time: a reader may name the configured servers only; an operator any", async () => {
  const store = seededStore();
  seedTimeServers(store, ["ntp.example", "192.0.2.7"]);
  const querier = recordingQuerier();
  const f = await startApiFixture({ store, timeQuerier: querier });
  try {
    const reader = f.client(f.pki.clients["os:reader"]);
    equal(await codeOf(reader.api.time({ server: "NTP.example." })), "ok");
    equal(await codeOf(reader.api.time({ server: "192.0.2.7:123" })), "ok");
    equal(
      await codeOf(reader.api.time({ server: "198.51.100.9" })),
      'PermissionDenied: Role "os:reader" may query only the node\'s configured time servers ' +
        '("ntp.example", "192.0.2.7"); naming "198.51.100.9" needs "os:operator" or higher, ' +
        "because it makes the node send UDP to it",
    );
    const operator = f.client(f.pki.clients["os:operator"]);
    equal(await codeOf(operator.api.time({ server: "198.51.100.9" })), "ok");
    deepEqual(querier.hosts, ["NTP.example.", "192.0.2.7", "198.51.100.9"]);
  } finally {
    await f.close();
  }
});

Deno.test("Time: queries naming a server share the node's bucket; past it ResourceExhausted", async () => {
  let now = 0;
  const querier = recordingQuerier();
  const f = await startApiFixture({
    timeQuerier: querier,
    timeBudget: createTokenBucket({ ratePerSecond: 2, burst: 2, now: () => now }),
  });
  try {
    const admin = f.client();
    const operator = f.client(f.pki.clients["os:operator"]);
    equal(await codeOf(admin.api.time({ server: "a.example" })), "ok");
    equal(await codeOf(operator.api.time({ server: "b.example" })), "ok");
    equal(
      await codeOf(admin.api.time({ server: "c.example" })),
      "ResourceExhausted: Time queries naming a server are limited to 2 a second on this node " +
        "(burst 2); try again in 500 ms",
    );
    // The status alone is not budgeted.
    equal(await codeOf(admin.api.time({})), "ok");
    now = 500;
    equal(await codeOf(operator.api.time({ server: "c.example" })), "ok");
    deepEqual(querier.hosts, ["a.example", "b.example", "c.example"]);
  } finally {
    await f.close();
  }
});

Deno.test("Time: a server that does not answer ends at the query's deadline as Unavailable", async () => {
  const f = await startApiFixture({
    timeQuerier: {
      query: (_host, signal) =>
        new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason))),
    },
  });
  try {
    match(
      await codeOf(f.client().api.time({ server: "silent.example" })),
      /^Unavailable: .*silent\.example/,
    );
  } finally {
    await f.close();
  }
});

Deno.test("Time with a server but no SNTP client answers Unimplemented", async () => {
  const f = await startApiFixture();
  try {
    match(await codeOf(f.client().api.time({ server: "pool.ntp.org" })), /^Unimplemented/);
  } finally {
    await f.close();
  }
});
