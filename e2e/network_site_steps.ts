/**
 * The network a real site has, on the network test's VM (e2e/node_network_test.ts),
 * whose two NICs are the ports of an active-backup bond carrying DHCP and SLAAC,
 * with a free PCIe root port for a third (issue 30's QEMU cases):
 *
 * 1. QMP `set_link net0 off` takes the first port's carrier away: the API
 *    keeps answering at the bond's address through the second port;
 * 2. dnsmasq's router advertisements on the tap network give the bond a
 *    SLAAC address, and machinectl dials it with full name verification
 *    (the API certificate names the node's IPv6 addresses; the node listens
 *    on `[::]:50000`, both families);
 * 3. DHCPv6 on the bond: dnsmasq leases an IA_NA address from a second
 *    prefix ({@link SITE_DHCP6_PREFIX}) with a DNS server; the node holds it
 *    as a /128 of origin `dhcp6` and lists the server among its resolvers;
 * 4. a NIC hot-added with QMP `device_add` is configured without a reboot
 *    (the config's {@link SITE_HOT_LINK} on DHCP): the time from `device_add`
 *    to its lease and to its address in AddressStatus is measured;
 * 5. ApplyConfiguration `try` with a firewall that closes the API to this
 *    network (`default: block`, admin subnets elsewhere): the API stops
 *    answering, the try expires, the firewall is reverted and the API answers
 *    again, with no operator action.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import type { TapNetwork, Vm } from "../imager/mod.ts";
import { machinectlInNetns, parseDocs } from "./helpers.ts";
import { hotAddNic, retryWhile, setLink } from "./tap_boot.ts";
import { dhcp6Step } from "./dhcp6_step.ts";
import { lacpNetwork } from "./lacp_vlan_step.ts";

/** The tap network's IPv6 prefix (router advertisements only). */
export const SITE_IPV6_PREFIX = "fd99::";
/** The prefix dnsmasq leases DHCPv6 addresses from (its DNS server: `fd99::1`). */
export const SITE_DHCP6_PREFIX = "fd98::";
/**
 * The NIC plugged in later: after the two tap NICs and the two cabled to the
 * LACP peer (e2e/lacp_vlan_step.ts), the kernel names it eth4.
 */
export const SITE_HOT_LINK = "eth4";
/** The bond's ports and the NIC plugged in later. */
export const SITE_MACS = {
  first: "52:54:00:6d:61:01",
  second: "52:54:00:6d:61:02",
  hot: "52:54:00:6d:61:03",
};
const UNREACHABLE =
  /cannot reach|did not answer|ECONNREFUSED|ECONNRESET|timed out|closed the connection during the TLS handshake/i;
const NAME_MISMATCH = /altnames|ERR_TLS_CERT_ALTNAME_INVALID|NotValidForName|not valid for name/i;
const secs = (t0: number) => +((performance.now() - t0) / 1000).toFixed(1);

/**
 * `machine.network` for the site: bond0 (active-backup over both tap NICs,
 * chosen by MAC) on DHCP, SLAAC and DHCPv6; the 802.3ad bond and VLAN of
 * e2e/lacp_vlan_step.ts; {@link SITE_HOT_LINK}, plugged in later, on DHCP.
 */
export function siteNetwork(): Record<string, unknown> {
  const lacp = lacpNetwork();
  return {
    bonds: [{
      name: "bond0",
      mode: "active-backup",
      ports: [{ mac: SITE_MACS.first }, { mac: SITE_MACS.second }],
      miimon: 100,
      dhcp: true,
      ipv6: { slaac: true, dhcp: true },
    }, ...lacp.bonds],
    vlans: lacp.vlans,
    interfaces: [{ name: SITE_HOT_LINK, dhcp: true }],
    nameservers: [],
  };
}

/** The AddressStatus fields the steps read. */
interface AddressSpec {
  link: string;
  family: "inet" | "inet6";
  address: string;
  prefixLen: number;
}

/** What the steps need from the network test. */
export interface SiteContext {
  t: Deno.TestContext;
  net: TapNetwork;
  ns: string;
  vm: Vm;
  /** The bond's DHCP address. */
  address: string;
  clientConfig: string;
  /** The node's machine config (a parsed object), for the firewall try. */
  config: Record<string, unknown>;
  work: string;
}

/** Runs the steps; returns their figures. */
export async function networkSiteSteps(c: SiteContext): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  const dial = (endpoint: string, args: string[], retry: RegExp, ms = 60_000) =>
    retryWhile(() => machinectlInNetns(c.ns, c.clientConfig, endpoint, ...args), retry, ms, 1000);
  const api = `${c.address}:50000`;
  /** AddressStatus polled every 500 ms until one matches `want`, up to `ms`. */
  const pollAddress = async (want: (a: AddressSpec) => boolean, ms: number) => {
    for (const deadline = performance.now() + ms; performance.now() < deadline;) {
      const r = await machinectlInNetns(
        c.ns,
        c.clientConfig,
        api,
        "get",
        "addresses",
        "-o",
        "json",
      );
      const hit = r.code === 0
        ? parseDocs(r.out).map((d) => d.spec as unknown as AddressSpec).find(want)
        : undefined;
      if (hit) return hit;
      await new Promise((ok) => setTimeout(ok, 500));
    }
    return undefined;
  };

  await c.t.step(
    "active-backup: the first port's carrier off, the API answers through the second",
    async () => {
      await setLink(c.vm, "net0", false);
      const t0 = performance.now();
      try {
        const r = await dial(api, ["version"], UNREACHABLE, 60_000);
        assert.equal(r.code, 0, r.err);
        figures.bondFailoverAnswerS = secs(t0);
      } finally {
        await setLink(c.vm, "net0", true);
      }
    },
  );

  await c.t.step(
    "SLAAC from the tap network's advertisements; the API answers at that address",
    async () => {
      const t0 = performance.now();
      const slaac = await pollAddress(
        (a) => a.link === "bond0" && a.family === "inet6" && a.address.startsWith("fd99:"),
        90_000,
      );
      assert.ok(slaac, `no ${SITE_IPV6_PREFIX}/64 address on bond0`);
      figures.slaacAddressS = secs(t0);
      const v = await dial(
        `[${slaac.address}]:50000`,
        ["version"],
        // A new address re-issues the certificate and the edge takes it up: a connection cut
        // then says "closed the connection ... try again", retried like an unreachable node.
        new RegExp(`${UNREACHABLE.source}|${NAME_MISMATCH.source}|closed the connection`, "i"),
        90_000,
      );
      assert.equal(v.code, 0, v.err);
      figures.slaacApiAnswerS = secs(t0);
    },
  );

  Object.assign(
    figures,
    await dhcp6Step({ ...c, api, prefix: SITE_DHCP6_PREFIX, dns: `${SITE_IPV6_PREFIX}1` }),
  );

  await c.t.step("a NIC hot-added with device_add is configured without a reboot", async () => {
    const t0 = performance.now();
    await hotAddNic(c.net, c.vm, { mac: SITE_MACS.hot, id: "hot0", port: 0 });
    const lease = await c.net.waitForLease({ mac: SITE_MACS.hot, timeoutMs: 60_000 });
    figures.hotplugToLeaseS = secs(t0);
    const held = await pollAddress(
      (a) => a.link === SITE_HOT_LINK && a.address === lease.address,
      60_000,
    );
    assert.ok(held, `${lease.address} never showed on ${SITE_HOT_LINK}`);
    figures.hotplugToAddressS = secs(t0);
  });

  await c.t.step(
    "a try that closes the API with the firewall reverts by itself; the API comes back",
    async () => {
      const tried = structuredClone(c.config) as { machine: { network: Record<string, unknown> } };
      tried.machine.network.firewall = { default: "block", admin_subnets: ["10.123.0.0/24"] };
      const file = join(c.work, "firewall-try.yaml");
      await Deno.writeTextFile(file, stringify(tried));
      const t0 = performance.now();
      const r = await machinectlInNetns(
        c.ns,
        c.clientConfig,
        api,
        "apply-config",
        "-f",
        file,
        "--mode",
        "try",
        "--timeout",
        "30s",
      );
      assert.equal(r.code, 0, r.err + r.out);
      // The firewall controller applies the tried table a moment after the answer: poll until
      // a new connection is dropped (a dropped call waits out the client's connect timeout).
      const version = () => machinectlInNetns(c.ns, c.clientConfig, api, "version");
      let blocked = await version();
      for (const end = performance.now() + 15_000; blocked.code === 0 && performance.now() < end;) {
        await new Promise((ok) => setTimeout(ok, 1000));
        blocked = await version();
      }
      figures.firewallTryBlockedS = secs(t0);
      assert.notEqual(blocked.code, 0, "the API still answered under the tried firewall");
      assert.match(blocked.err, UNREACHABLE);
      const back = await dial(api, ["version"], UNREACHABLE, 120_000);
      assert.equal(back.code, 0, back.err);
      figures.firewallTryBackS = secs(t0);
      const fw = await machinectlInNetns(
        c.ns,
        c.clientConfig,
        api,
        "get",
        "firewallstatus",
        "-o",
        "json",
      );
      assert.equal(fw.code, 0, fw.err);
      const docs = parseDocs(fw.out);
      assert.ok(
        docs.every((d) => d.spec.enabled !== true),
        `the firewall is still in force: ${fw.out}`,
      );
    },
  );
  return figures;
}
