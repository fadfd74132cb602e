import assert from "node:assert/strict";
import { findCycles, startLayers, stopLayers } from "./dependency_graph.ts";

const graph = (o: Record<string, string[]>) => new Map(Object.entries(o));

Deno.test("start layers put dependencies first; stop layers reverse them", () => {
  const deps = graph({
    payload: ["containerd", "db"],
    db: ["containerd"],
    containerd: [],
    solo: [],
  });
  assert.deepEqual(startLayers(deps), [["containerd", "solo"], ["db"], ["payload"]]);
  assert.deepEqual(stopLayers(deps), [["payload"], ["db"], ["containerd", "solo"]]);
});

Deno.test("unknown dependencies do not order anything", () => {
  assert.deepEqual(startLayers(graph({ a: ["ghost"] })), [["a"]]);
});

Deno.test("cycles are found with their path and left out of start layers", () => {
  const deps = graph({ a: ["b"], b: ["c"], c: ["a"], d: ["a"], e: [] });
  const cycles = findCycles(deps);
  assert.deepEqual([...cycles.keys()].sort(), ["a", "b", "c"]);
  assert.deepEqual(cycles.get("a"), ["a", "b", "c", "a"]);
  assert.deepEqual(startLayers(deps), [["d", "e"]]);
  assert.deepEqual(stopLayers(deps)[0], ["a", "b", "c"]);
  assert.deepEqual(findCycles(graph({ s: ["s"] })).get("s"), ["s", "s"]);
});
