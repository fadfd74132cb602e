/**
 * Benchmarks of the store and the controller runtime. Each function returns
 * figures; bench/main.ts prints them as JSON lines.
 */
import { ControllerRuntime, Store } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";

type Cat = { A: { n: number }; B: { n: number }; C: { n: number }; D: { n: number } };

/** One benchmark result. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  [extra: string]: unknown;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Compare-and-swap updates per second on one resource, and creates per second. */
export function storeThroughput(n = 200_000): Figure[] {
  const s = new Store<Cat>();
  s.create({ type: "A", namespace: "ns", id: "x", spec: { n: 0 }, owner: "o" });
  let t = performance.now();
  for (let i = 1; i <= n; i++) {
    s.update({ type: "A", namespace: "ns", id: "x", version: i, spec: { n: i }, owner: "o" });
  }
  const updates = n / ((performance.now() - t) / 1000);
  t = performance.now();
  const creates = Math.min(n, 50_000);
  for (let i = 0; i < creates; i++) {
    s.create({ type: "B", namespace: "ns", id: `r${i}`, spec: { n: i }, owner: "o" });
  }
  const createRate = creates / ((performance.now() - t) / 1000);
  return [
    { name: "store.update", value: Math.round(updates), unit: "ops/s" },
    { name: "store.create", value: Math.round(createRate), unit: "ops/s" },
  ];
}

/** Time from a commit until every one of `watchers` watchers has received it. */
export async function watchFanout(watchers: number, rounds = 200): Promise<Figure> {
  const s = new Store<Cat>();
  s.create({ type: "A", namespace: "ns", id: "x", spec: { n: 0 }, owner: "o" });
  const ws = Array.from({ length: watchers }, () => s.watch("A"));
  for (const w of ws) {
    await w.next();
    await w.next();
  }
  const samples: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    const t = performance.now();
    s.update({ type: "A", namespace: "ns", id: "x", version: i, spec: { n: i }, owner: "o" });
    await Promise.all(ws.map((w) => w.next()));
    samples.push(performance.now() - t);
  }
  for (const w of ws) w.close();
  samples.sort((a, b) => a - b);
  return {
    name: `watch.fanout.${watchers}`,
    value: +percentile(samples, 0.5).toFixed(4),
    unit: "ms(p50)",
    p99: +percentile(samples, 0.99).toFixed(4),
    watchers,
  };
}

/** Spec → controller → status → controller → status: time until the last output reflects a change. */
export async function controllerChain(rounds = 200): Promise<Figure> {
  const store = new Store<Cat>();
  const runtime = new ControllerRuntime(store);
  const stage = (from: "A" | "B" | "C", to: "B" | "C" | "D") => ({
    name: `bench.${from}to${to}`,
    inputs: [{ type: from, kind: "weak" as const }],
    outputs: [{ type: to, kind: "exclusive" as const }],
    async reconcile(ctx: Parameters<Parameters<typeof runtime.register>[0]["reconcile"]>[0]) {
      for (const r of ctx.list(from)) {
        await ctx.apply({ type: to, namespace: "ns", id: r.metadata.id }, { n: r.spec.n });
      }
    },
  });
  runtime.register(stage("A", "B"));
  runtime.register(stage("B", "C"));
  runtime.register(stage("C", "D"));
  runtime.start();
  store.create({ type: "A", namespace: "ns", id: "x", spec: { n: 0 }, owner: "user" });
  await waitForResource(store, "D", (r) => r.spec.n === 0);
  const samples: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    const t = performance.now();
    await store.modify({ type: "A", namespace: "ns", id: "x" }, "user", () => ({ n: i }));
    await waitForResource(store, "D", (r) => r.spec.n === i);
    samples.push(performance.now() - t);
  }
  await runtime.stop();
  samples.sort((a, b) => a - b);
  return {
    name: "controller.chain3",
    value: +percentile(samples, 0.5).toFixed(4),
    unit: "ms(p50)",
    p99: +percentile(samples, 0.99).toFixed(4),
  };
}
