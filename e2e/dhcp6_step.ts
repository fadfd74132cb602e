/**
 * DHCPv6 in the network case (e2e/network_site_steps.ts): bond0 runs
 * `ipv6: { dhcp: true }` beside SLAAC, and the tap network's dnsmasq serves
 * IA_NA addresses from a second prefix with a DNS server (its router
 * advertisements then carry the M flag; the node's client does not wait for
 * it). The step reads, through `machinectl get`: the bound Dhcp6Lease, its
 * /128 as an AddressSpec of origin `dhcp6` and in AddressStatus, the server
 * in ResolverStatus; and dnsmasq's log shows the REPLY for that address.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { TapNetwork } from "../imager/mod.ts";
import { type GetTarget, pollGet } from "./poll_get.ts";

/** What the step needs. */
export interface Dhcp6StepContext extends GetTarget {
  t: Deno.TestContext;
  net: TapNetwork;
  /** The prefix dnsmasq leases from (`fd98::`). */
  prefix: string;
  /** The DNS server dnsmasq hands out. */
  dns: string;
}

/** Runs the step; returns its figures. */
export async function dhcp6Step(c: Dhcp6StepContext): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  await c.t.step(
    "DHCPv6 on the bond: an IA_NA /128 (origin dhcp6) and the DNS server from dnsmasq",
    async () => {
      const t0 = performance.now();
      const bound =
        (id: string) => (d: { metadata: { id: string }; spec: Record<string, unknown> }) =>
          d.metadata.id === id && d.spec.state === "bound";
      const lease = await pollGet(c, "dhcp6leases", bound("bond0"), 90_000);
      figures.dhcp6WaitS = +((performance.now() - t0) / 1000).toFixed(1);
      const address = String(lease.spec.address);
      assert.ok(address.startsWith(c.prefix), `${address} is not from ${c.prefix}/64`);
      assert.equal(lease.spec.prefixLen, 128);
      assert.deepEqual(lease.spec.dnsServers, [c.dns]);
      const v4 = await pollGet(c, "dhcp", bound("bond0"), 10_000);
      // Both on the node's clock: how long after the DHCPv4 lease the DHCPv6 one was bound.
      figures.dhcp6AfterDhcp4S = +(
        (Date.parse(String(lease.spec.acquired)) - Date.parse(String(v4.spec.acquired))) / 1000
      ).toFixed(1);
      await pollGet(
        c,
        "addressspecs",
        (d) =>
          d.spec.link === "bond0" && d.spec.address === address && d.spec.prefixLen === 128 &&
          d.spec.origin === "dhcp6",
        30_000,
      );
      await pollGet(
        c,
        "addresses",
        (d) => d.spec.link === "bond0" && d.spec.address === address && d.spec.prefixLen === 128,
        30_000,
      );
      await pollGet(
        c,
        "resolvers",
        (d) => (d.spec.nameservers as string[]).includes(c.dns),
        30_000,
      );
      const log = await Deno.readTextFile(c.net.log);
      assert.ok(
        log.includes(`DHCPREPLY(br0) ${address} `),
        `no DHCPREPLY for ${address} in dnsmasq's log`,
      );
      console.log(`DHCPv6: bond0 leased ${address}/128 with DNS ${c.dns}`);
    },
  );
  return figures;
}
