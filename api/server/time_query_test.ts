import { equal, throws } from "node:assert/strict";
import { createTokenBucket, parseTimeServer } from "./time_query.ts";

Deno.test("parseTimeServer: host, v6, [v6], :123; another port or a bad host refused", () => {
  equal(parseTimeServer("pool.ntp.org"), "pool.ntp.org");
  equal(parseTimeServer(" pool.ntp.org:123 "), "pool.ntp.org");
  equal(parseTimeServer("[fe80::1]"), "fe80::1");
  equal(parseTimeServer("[::1]:123"), "::1");
  equal(parseTimeServer("2001:db8::1"), "2001:db8::1");
  throws(() => parseTimeServer("10.0.0.1:1123"), /port 123 only/);
  throws(() => parseTimeServer("[::1]:53"), /port 123 only/);
  throws(() => parseTimeServer("ntp:"), /port 123 only/);
  throws(() => parseTimeServer("a b"), RangeError);
  throws(() => parseTimeServer(""), RangeError);
});

Deno.test("token bucket: a burst, then the rate; never more than the burst saved up", () => {
  let t = 0;
  const b = createTokenBucket({ ratePerSecond: 2, burst: 3, now: () => t });
  equal([b.take(), b.take(), b.take(), b.take()].join(), "true,true,true,false");
  equal(b.waitMs(), 500);
  t = 499;
  equal(b.take(), false);
  t = 500;
  equal(b.take(), true);
  equal(b.take(), false);
  t = 60_000; // a long quiet spell refills to the burst only
  equal([b.take(), b.take(), b.take(), b.take()].join(), "true,true,true,false");
});
