import { deepEqual, equal } from "node:assert/strict";
import { Code, type ConnectError } from "@connectrpc/connect";
import { startApiFixture, withTimeout } from "../testing.ts";
import { watchEventFromProto } from "../mapping/mod.ts";

Deno.test("Watch through the API: bootstrap, marker, live events, cancel releases the store watch", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const ac = new AbortController();
    const it = c.api.watch({ type: "controllers" }, { signal: ac.signal })[Symbol.asyncIterator]();
    const next = async () => {
      const r = await withTimeout(it.next(), 5000, "watch event");
      return watchEventFromProto(r.value!);
    };
    const kinds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const e = await next();
      kinds.push(e.kind === "created" ? `created:${e.resource.metadata.id}` : e.kind);
    }
    deepEqual(kinds, [
      "created:network.AddressSpecController",
      "created:time.SyncController",
      "bootstrapped",
    ]);
    equal(f.store.watchCount, 1);
    const ptr = {
      type: "ControllerStatus" as const,
      namespace: "runtime",
      id: "time.SyncController",
    };
    await f.store.modify(ptr, "test", (s) => ({ ...s!, failures: 9 }));
    const updated = await next();
    equal(updated.kind, "updated");
    if (updated.kind === "updated") {
      equal((updated.resource.spec as { failures: number }).failures, 9);
      equal((updated.old.spec as { failures: number }).failures, 0);
    }
    f.store.teardown(ptr, "test");
    f.store.destroy(ptr, "test");
    equal((await next()).kind, "updated"); // phase → tearingDown
    equal((await next()).kind, "destroyed");

    ac.abort();
    await it.return?.();
    // The cancel crosses apid and the socket; the store has no close event, so poll (bounded).
    await withTimeout(
      (async () => {
        while (f.store.watchCount > 0) await new Promise((r) => setTimeout(r, 10));
      })(),
      5000,
      "store watch released",
    );
    c.close();
  } finally {
    await f.close();
  }
});

Deno.test("Watch of an unknown type is InvalidArgument listing the known types", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client();
    try {
      for await (const _ of c.api.watch({ type: "nope" })) break;
      throw new Error("expected failure");
    } catch (e) {
      equal((e as ConnectError).code, Code.InvalidArgument);
      equal((e as ConnectError).rawMessage.includes("MachineStatus"), true);
    }
    c.close();
  } finally {
    await f.close();
  }
});

Deno.test("Events stream delivers published machine events with kind filter", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:reader"]);
    const ac = new AbortController();
    const it = c.api.events({ kinds: ["service"] }, { signal: ac.signal })[Symbol.asyncIterator]();
    const first = it.next();
    await withTimeout(f.events.whenSubscribers(1), 5000, "subscriber");
    f.events.emit("config", "machine", "applied", "skip me");
    f.events.emit("service", "containerd", "ready", "containerd up", { pid: "42" });
    const r = await withTimeout(first, 5000, "event");
    equal(r.value!.event!.message, "containerd up");
    equal(r.value!.event!.subject, "containerd");
    equal(r.value!.event!.action, "ready");
    equal(r.value!.event!.fields.pid, "42");
    equal(r.value!.event!.seq, 2n);
    const sent = f.events.history().find((e) => e.seq === 2)!;
    equal(r.value!.event!.monoMs, sent.monoMs, "the monotonic time travels with the event");
    ac.abort();
    await it.return?.();
    c.close();
  } finally {
    await f.close();
  }
});
