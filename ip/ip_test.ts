import assert from "node:assert/strict";
import {
  formatCidr,
  formatIp,
  hasZeroHostBits,
  networkOf,
  parseCidr,
  parseHostPort,
  parseIp,
  parseIpv4,
  parseIpv6,
} from "./ip.ts";

Deno.test("ipv4: accepts dotted quads, rejects leading zeros and out-of-range octets", () => {
  for (const ok of ["0.0.0.0", "255.255.255.255", "10.0.0.1", "192.168.100.200"]) {
    assert.deepEqual(parseIpv4(ok)?.family, 4, ok);
  }
  for (
    const bad of [
      "010.0.0.1",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "1.2.3.-1",
      "1..2.3",
      " 1.2.3.4",
      "a.b.c.d",
      "1.2.3.4/24",
      "0x1.2.3.4",
      "",
    ]
  ) {
    assert.deepEqual(parseIpv4(bad), undefined, bad);
  }
});

Deno.test("ipv6: accepts RFC 4291 forms", () => {
  const cases: Array<[string, string]> = [
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["fd00::2", "fd00::2"],
    ["FD00:0:0:0:0:0:0:2", "fd00::2"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"],
    ["::ffff:192.0.2.1", "::ffff:c000:201"],
    ["64:ff9b::1.2.3.4", "64:ff9b::102:304"],
    ["1:0:1:1:1:1:1:1", "1:0:1:1:1:1:1:1"],
  ];
  for (const [text, canonical] of cases) {
    const ip = parseIpv6(text);
    assert.deepEqual(ip && formatIp(ip), canonical, text);
  }
});

Deno.test("ipv6: rejects malformed forms and zones", () => {
  for (
    const bad of [
      ":",
      ":::",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8::",
      "12345::",
      "g::1",
      ":1::",
      "1::2:",
      "fe80::1%eth0",
      "1.2.3.4::",
      "::1.2.3",
      "::ffff:010.0.0.1",
      "1:2:3:4:5:6:7:1.2.3.4",
    ]
  ) {
    assert.deepEqual(parseIpv6(bad), undefined, bad);
  }
});

Deno.test("cidr: prefix bounds per family, no leading zeros, one slash", () => {
  assert.deepEqual(parseCidr("10.0.0.0/0")?.prefix, 0);
  assert.deepEqual(parseCidr("10.0.0.1/32")?.prefix, 32);
  assert.deepEqual(parseCidr("::/128")?.prefix, 128);
  assert.deepEqual(parseCidr("fd00::/8")?.family, 6);
  for (
    const bad of [
      "10.0.0.1/33",
      "::/129",
      "10.0.0.1/024",
      "10.0.0.1/",
      "10.0.0.1",
      "1.2.3.4/8/8",
      "/8",
      "1.2.3.4/-1",
      "1.2.3.4/ 8",
    ]
  ) {
    assert.deepEqual(parseCidr(bad), undefined, bad);
  }
});

Deno.test("cidr: host bits and network address", () => {
  const host = parseCidr("10.1.2.3/16")!;
  assert.deepEqual(hasZeroHostBits(host), false);
  assert.deepEqual(formatCidr(networkOf(host)), "10.1.0.0/16");
  assert.deepEqual(hasZeroHostBits(parseCidr("10.1.0.0/16")!), true);
  assert.deepEqual(hasZeroHostBits(parseCidr("0.0.0.0/0")!), true);
  assert.deepEqual(formatCidr(networkOf(parseCidr("10.1.2.3/23")!)), "10.1.2.0/23");
  assert.deepEqual(formatCidr(networkOf(parseCidr("fd00::1:2/112")!)), "fd00::1:0/112");
  assert.deepEqual(hasZeroHostBits(parseCidr("fd00::/64")!), true);
  assert.deepEqual(formatCidr(networkOf(parseCidr("255.255.255.255/1")!)), "128.0.0.0/1");
});

Deno.test("host:port: v4, bracketed v6, port range", () => {
  assert.deepEqual(parseHostPort("0.0.0.0:50000")?.port, 50000);
  assert.deepEqual(parseHostPort("[::]:50000")?.ip.family, 6);
  assert.deepEqual(parseHostPort("[fd00::1]:1")?.port, 1);
  for (
    const bad of [
      "::1:80",
      "1.2.3.4",
      "1.2.3.4:0",
      "1.2.3.4:65536",
      "1.2.3.4:080",
      "host:80",
      "[1.2.3.4]:80",
      "[::1]80",
    ]
  ) {
    assert.deepEqual(parseHostPort(bad), undefined, bad);
  }
  assert.deepEqual(parseHostPort("1.2.3.4:0", true)?.port, 0);
});

Deno.test("parseIp dispatches by family", () => {
  assert.deepEqual(parseIp("1.2.3.4")?.family, 4);
  assert.deepEqual(parseIp("::1")?.family, 6);
  assert.deepEqual(parseIp("localhost"), undefined);
});
