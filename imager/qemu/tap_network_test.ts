import assert from "node:assert/strict";
import { ipv6Args, parseLeases } from "./tap_network.ts";

Deno.test("DHCPACK lines of dnsmasq's log become leases, in order", () => {
  const log = [
    "dnsmasq-dhcp[9]: DHCPDISCOVER(br0) 52:54:00:aa:bb:cc",
    "dnsmasq-dhcp[9]: DHCPOFFER(br0) 10.99.0.57 52:54:00:aa:bb:cc",
    "dnsmasq-dhcp[9]: DHCPACK(br0) 10.99.0.57 52:54:00:AA:BB:CC e2e-net",
    "dnsmasq-dhcp[9]: DHCPACK(br0) 10.99.0.58 52:54:00:aa:bb:cd",
  ].join("\n");
  assert.deepEqual(parseLeases(log), [
    { address: "10.99.0.57", mac: "52:54:00:aa:bb:cc" },
    { address: "10.99.0.58", mac: "52:54:00:aa:bb:cd" },
  ]);
});

Deno.test("dnsmasq's IPv6 arguments: RAs only, RAs plus a stateful DHCPv6 range, none", () => {
  assert.deepEqual(ipv6Args({}), []);
  assert.deepEqual(ipv6Args({ ipv6Prefix: "fd99::" }), [
    "--enable-ra",
    "--dhcp-range=fd99::,ra-only,64,10m",
    "--ra-param=*,10",
  ]);
  const both = ipv6Args({ ipv6Prefix: "fd99::", dhcp6Prefix: "fd98::" });
  assert.ok(both.includes("--dhcp-range=fd98::100,fd98::1ff,64,10m"), both.join(" "));
  assert.ok(both.includes("--dhcp-option=option6:dns-server,[fd99::1]"), both.join(" "));
  assert.throws(() => ipv6Args({ dhcp6Prefix: "fd98::" }), RangeError);
});
