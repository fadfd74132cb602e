import { equal, match, ok, throws } from "node:assert/strict";
import { MetricsRegistry } from "./registry.ts";

Deno.test("registry renders counters, gauges, histograms and collectors in text format 0.0.4", async () => {
  const r = new MetricsRegistry();
  r.counter("x_requests_total", "Requests").inc({ method: "Get", code: "ok" }, 2);
  r.gauge("x_open", "Open").set({}, 3);
  r.histogram("x_seconds", "Durations", [0.1, 1]).observe({ c: "a" }, 0.5);
  r.collect(
    () => [{ name: "x_mem_bytes", help: "Memory", type: "gauge", samples: [{ value: 7 }] }],
  );
  r.collect(() => {
    throw new Error("broken reader");
  });
  const text = await r.render();
  match(text, /^# HELP x_requests_total Requests\n# TYPE x_requests_total counter\n/);
  ok(text.includes('x_requests_total{method="Get",code="ok"} 2\n'));
  ok(text.includes("x_open 3\n"));
  ok(text.includes('x_seconds_bucket{c="a",le="0.1"} 0\n'));
  ok(text.includes('x_seconds_bucket{c="a",le="1"} 1\n'));
  ok(text.includes('x_seconds_bucket{c="a",le="+Inf"} 1\n'));
  ok(text.includes('x_seconds_sum{c="a"} 0.5\nx_seconds_count{c="a"} 1\n'));
  ok(text.includes("x_mem_bytes 7\n"));
  ok(text.includes("machined_metrics_collector_errors 1\n"), "a failing collector is counted");
  ok(text.endsWith("\n"));
});

Deno.test("label values are escaped; bad names and decreasing counters are refused", async () => {
  const r = new MetricsRegistry();
  r.gauge("g", "h").set({ v: 'a"b\\c\nd' }, 1);
  equal((await r.render()).split("\n")[2], 'g{v="a\\"b\\\\c\\nd"} 1');
  throws(() => r.counter("bad-name", "h"), RangeError);
  throws(() => r.counter("g", "h"), RangeError);
  throws(() => r.counter("c", "h").inc({}, -1), RangeError);
  equal(r.gauge("g", "h"), r.gauge("g", "h"), "the same metric is returned by name");
});
