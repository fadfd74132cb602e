import assert from "node:assert/strict";
import { canonicalIp, maskIp, parseIp, prefixContains } from "./ip.ts";
import { linkLocalFromMac } from "./fake_rules.ts";

Deno.test("ip: canonical forms follow RFC 5952", () => {
  const cases: Array<[string, string | undefined]> = [
    ["10.0.0.1", "10.0.0.1"],
    ["FD00:0:0:0:0:0:0:1", "fd00::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["::", "::"],
    ["::1", "::1"],
    ["fe80::", "fe80::"],
    ["::ffff:10.0.0.1", "::ffff:10.0.0.1"],
    ["10.0.0.256", undefined],
    ["010.0.0.1", undefined],
    ["1::2::3", undefined],
    ["1:2:3:4:5:6:7:8:9", undefined],
  ];
  for (const [input, want] of cases) assert.equal(canonicalIp(input), want, input);
});

Deno.test("ip: masks and containment", () => {
  const net = parseIp("10.1.2.3")!.bytes;
  assert.deepEqual(Array.from(maskIp(net, 20)), [10, 1, 0, 0]);
  assert.ok(prefixContains(parseIp("10.1.0.0")!.bytes, 16, net));
  assert.ok(!prefixContains(parseIp("10.2.0.0")!.bytes, 16, net));
  assert.ok(!prefixContains(parseIp("fd00::")!.bytes, 8, net));
});

Deno.test("ip: EUI-64 link-local from a MAC", () => {
  assert.equal(linkLocalFromMac("02:00:00:00:00:01"), "fe80::ff:fe00:1");
  assert.equal(linkLocalFromMac("52:54:00:12:34:56"), "fe80::5054:ff:fe12:3456");
});
