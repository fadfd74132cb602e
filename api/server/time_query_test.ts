import { deepEqual, throws } from "node:assert/strict";
import { parseTimeServer } from "./time_query.ts";

Deno.test("parseTimeServer: host, host:port, v6, [v6]:port; bad ones refused", () => {
  deepEqual(parseTimeServer("pool.ntp.org"), { host: "pool.ntp.org", port: 123 });
  deepEqual(parseTimeServer("10.0.0.1:1123"), { host: "10.0.0.1", port: 1123 });
  deepEqual(parseTimeServer("[::1]:1123"), { host: "::1", port: 1123 });
  deepEqual(parseTimeServer("[fe80::1]"), { host: "fe80::1", port: 123 });
  deepEqual(parseTimeServer("2001:db8::1"), { host: "2001:db8::1", port: 123 });
  throws(() => parseTimeServer("ntp:0"), RangeError);
  throws(() => parseTimeServer("ntp:70000"), RangeError);
  throws(() => parseTimeServer("a b"), RangeError);
});
