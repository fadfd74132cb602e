import { equal } from "node:assert/strict";
import { Sampler } from "./sampler.ts";

Deno.test("sampler: a call within the interval compares with the older sample and keeps none", () => {
  let t = 0;
  const s = new Sampler<number>(1000, () => t);
  equal(s.observe(1), undefined);
  t = 1500;
  equal(s.observe(2)?.value, 1);
  // A second client 100 ms later still gets a rate over >= 1 s, not over 100 ms.
  t = 1600;
  equal(s.observe(3)?.value, 1);
  t = 2600;
  equal(s.observe(4)?.value, 2);
});
