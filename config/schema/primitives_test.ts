import assert from "node:assert/strict";
import { parseDuration, parseSize } from "./primitives.ts";
import { parseCpuMax } from "./services.ts";

Deno.test("durations: unit pairs to milliseconds", () => {
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("30s"), 30_000);
  assert.equal(parseDuration("5m"), 300_000);
  assert.equal(parseDuration("1h30m"), 5_400_000);
  assert.equal(parseDuration("0s"), 0);
  for (const bad of ["10", "1.5s", "s", "1d", "-1s", "1 s", "", "1h 30m"]) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
});

Deno.test("sizes: bytes, decimal and binary units", () => {
  assert.equal(parseSize(1024), 1024);
  assert.equal(parseSize("1024"), 1024);
  assert.equal(parseSize("1k"), 1000);
  assert.equal(parseSize("64Ki"), 65536);
  assert.equal(parseSize("512Mi"), 536870912);
  assert.equal(parseSize("2G"), 2e9);
  for (const bad of ["512Mb", "1.5Gi", "-1", "Mi", "1 Mi", -1, 1.5]) {
    assert.equal(parseSize(bad), undefined, String(bad));
  }
});

Deno.test("cpu_max: CPU counts and cgroup form", () => {
  assert.equal(parseCpuMax(0.5), "50000 100000");
  assert.equal(parseCpuMax("2"), "200000 100000");
  assert.equal(parseCpuMax("max 100000"), "max 100000");
  assert.equal(parseCpuMax("25000 50000"), "25000 50000");
  for (const bad of ["0.001", 0, "max", "100 100000", "1000 10", "1000 2000000", "-1", "1/2"]) {
    assert.equal(parseCpuMax(bad), undefined, String(bad));
  }
});
