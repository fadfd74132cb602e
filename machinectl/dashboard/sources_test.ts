/**
 * The connection loop against the real apid and machined-side server: it
 * retries with backoff until the node answers, fills the state from the
 * streams, reconnects when the connection drops (same boot: history kept),
 * and resets when MachineStatus is created anew (a new boot).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { type ApiFixture, startApiFixture, withTimeout } from "../../api/testing.ts";
import { backoffMs, followNode } from "./sources.ts";
import { type DashboardAction, type DashboardState, initialState, reduce } from "./state.ts";
import type { MachineApi } from "./streams.ts";

/** The reducer, with a way to wait for a state (no polling: checked on every action). */
function recorder(endpoint: string) {
  let state = initialState(endpoint, Date.now());
  const actions: DashboardAction[] = [];
  let waiters: { pred: (s: DashboardState) => boolean; resolve: () => void }[] = [];
  return {
    get state() {
      return state;
    },
    actions,
    dispatch(a: DashboardAction) {
      actions.push(a);
      state = reduce(state, a);
      waiters = waiters.filter((w) => (w.pred(state) ? (w.resolve(), false) : true));
    },
    until(pred: (s: DashboardState) => boolean, what: string): Promise<void> {
      if (pred(state)) return Promise.resolve();
      return withTimeout(
        new Promise<void>((resolve) => waiters.push({ pred, resolve })),
        10_000,
        what,
      );
    },
  };
}

/** Waits for abort, then fails as a sampler whose session ended would. */
function idleSampler(_api: MachineApi, signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true })
  );
}

function seed(f: ApiFixture) {
  f.store.create({
    type: "HostnameStatus",
    namespace: "network",
    id: "hostname",
    owner: "test",
    spec: { hostname: "node-1", domainname: "", fqdn: "node-1" },
  });
  f.store.create({
    type: "ServiceStatus",
    namespace: "runtime",
    id: "containerd",
    owner: "test",
    spec: {
      state: "running",
      healthy: true,
      restarts: 0,
      pid: 10,
      lastExit: null,
      message: "running",
      since: Date.now(),
      logFileError: "",
      sandbox: null,
    },
  });
}

Deno.test("followNode: retries with backoff, follows the streams, reconnects, sees a new boot", async () => {
  const f = await startApiFixture();
  const abort = new AbortController();
  const rec = recorder(f.endpoint);
  let refusals = 2;
  const clients: { close(): void }[] = [];
  try {
    seed(f);
    f.events.emit("service", "containerd", "ready", "running");
    f.logger.info("test", "hello from machined");
    const loop = followNode({
      connect: () => {
        if (refusals-- > 0) return Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1"));
        const c = f.client();
        clients.push(c);
        return Promise.resolve({ client: c.api, endpoint: f.endpoint, close: c.close });
      },
      dispatch: rec.dispatch,
      signal: abort.signal,
      sampler: idleSampler,
    });
    await rec.until(
      (s) =>
        s.hostname === "node-1" && s.services.has("containerd") && s.logs.length > 0 &&
        s.events.length > 0,
      "the first screen",
    );
    const retries = rec.actions.filter((a) => a.type === "disconnected");
    deepEqual(retries.map((a) => a.type === "disconnected" && a.attempt), [1, 2]);
    match((retries[0] as { error: string }).error, /cannot reach the node.*ECONNREFUSED/);
    equal(rec.state.link.kind, "connected");
    equal(rec.state.stage, "running");
    ok(rec.state.logs.some((l) => l.text.includes("hello from machined")));

    // The connection drops (as when apid restarts): reconnect, same boot, nothing replayed twice.
    const eventsBefore = rec.state.events.length;
    clients.at(-1)!.close();
    await rec.until((s) => s.link.kind === "reconnecting", "reconnecting");
    await rec.until((s) => s.link.kind === "connected", "connected again");
    f.events.emit("service", "containerd", "stopping", "by request");
    await rec.until((s) => s.events.length === eventsBefore + 1, "the new event only");
    equal(rec.state.rebootedAt, null);

    // MachineStatus created anew: a new boot, history reset, the time shown.
    await new Promise((r) => setTimeout(r, 5));
    const ptr = { type: "MachineStatus", namespace: "runtime", id: "machine" } as const;
    const old = f.store.get(ptr.type, ptr.namespace, ptr.id);
    f.store.destroy(ptr, "test");
    f.store.create({ ...ptr, owner: "test", spec: old.spec });
    await rec.until((s) => s.rebootedAt !== null, "rebooted");
    equal(rec.state.events.length, 0);
    abort.abort();
    await withTimeout(loop, 5_000, "the loop ends on abort");
  } finally {
    abort.abort();
    await f.close();
  }
});

Deno.test("backoffMs: 250 ms doubling to at most 5 s", () => {
  deepEqual([1, 2, 3, 4, 5, 6, 20].map(backoffMs), [250, 500, 1000, 2000, 4000, 5000, 5000]);
});

Deno.test("followNode: a node that refuses the Logs stream stays connected and says so", async () => {
  const f = await startApiFixture({ nodeServices: false });
  const abort = new AbortController();
  const rec = recorder(f.endpoint);
  try {
    f.events.emit("service", "containerd", "ready", "running");
    const loop = followNode({
      connect: () => {
        const c = f.client();
        return Promise.resolve({ client: c.api, endpoint: f.endpoint, close: c.close });
      },
      dispatch: rec.dispatch,
      signal: abort.signal,
      sampler: idleSampler,
    });
    await rec.until((s) => s.refused.logs !== undefined, "logs refused");
    match(rec.state.refused.logs!, /Unimplemented/);
    f.events.emit("service", "containerd", "stopping", "");
    await rec.until((s) => s.events.length === 2, "events still flow");
    equal(rec.actions.filter((a) => a.type === "disconnected").length, 0);
    abort.abort();
    await withTimeout(loop, 5_000, "the loop ends on abort");
  } finally {
    abort.abort();
    await f.close();
  }
});
