import assert from "node:assert/strict";
import { parseLeases } from "./tap_network.ts";

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
