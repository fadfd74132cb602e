/**
 * An 802.3ad bond and a VLAN on it against a real kernel, in the network case
 * (e2e/node_network_test.ts): the node's two extra NICs are cabled to the
 * LACP peer VM (e2e/lacp_peer.ts), whose kernel bond aggregates them and
 * serves DHCPv4 on VLAN {@link PEER_VLAN}. The node's config puts the two NICs
 * (by MAC) in `bond1` (802.3ad, miimon 100, lacp_rate fast) with `bond1.5`
 * on DHCP. The step checks both ends: the peer's bond reports an aggregator
 * of two ports whose partner is the node's bond, and `machinectl get` shows
 * the node's bond, its VLAN, the lease from the peer's range and the address.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type GetDoc, pollGet } from "./poll_get.ts";
import { machinectlInNetns, parseDocs } from "./helpers.ts";
import {
  type LacpPeer,
  NODE_LACP_MACS,
  partnerPortStates,
  PEER_BOND_MAC,
  PEER_LACP_UP,
  PEER_SUBNET,
  PEER_VLAN,
} from "./lacp_peer.ts";

/** The node's 802.3ad bond and its VLAN. */
export const LACP_BOND = "bond1";
export const LACP_VLAN = `${LACP_BOND}.${PEER_VLAN}`;

/** `machine.network` entries for the bond and VLAN (merged into the site's network). */
export function lacpNetwork(): { bonds: unknown[]; vlans: unknown[] } {
  return {
    bonds: [{
      name: LACP_BOND,
      mode: "802.3ad",
      ports: NODE_LACP_MACS.map((mac) => ({ mac })),
      miimon: 100,
      lacp_rate: "fast",
      xmit_hash_policy: "layer3+4",
    }],
    vlans: [{ parent: LACP_BOND, id: PEER_VLAN, dhcp: true }],
  };
}

/** What the step needs from the network test. */
export interface LacpStepContext {
  t: Deno.TestContext;
  ns: string;
  clientConfig: string;
  /** `<address>:50000` of the node's API. */
  api: string;
  peer: LacpPeer;
  /** performance.now() when the peer's QEMU started. */
  peerStart: number;
}

const secs = (ms: number) => +(ms / 1000).toFixed(1);

/** Runs the step; returns its figures. */
export async function lacpVlanStep(c: LacpStepContext): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  const poll = (type: string, want: (d: GetDoc) => boolean, ms: number) =>
    pollGet(c, type, want, ms);

  await c.t.step(
    "802.3ad against a kernel bond: the peer aggregates both ports with the node as partner; " +
      "the VLAN on the node's bond leases from the peer's DHCP",
    async () => {
      const up = await c.peer.waitFor(PEER_LACP_UP, 90_000).catch(async (e) => {
        // The node's side of a failed aggregation, next to the peer's console.
        const r = await machinectlInNetns(
          c.ns,
          c.clientConfig,
          c.api,
          "get",
          "links",
          "-o",
          "json",
        );
        const mine = r.code === 0
          ? parseDocs(r.out).filter((d) =>
            [LACP_BOND, LACP_VLAN].includes(d.metadata.id) || d.spec.master === LACP_BOND
          )
          : r.err;
        throw new Error(`${(e as Error).message}\nthe node's links: ${JSON.stringify(mine)}`, {
          cause: e,
        });
      });
      figures.lacpUpAfterPeerStartS = secs(performance.now() - c.peerStart);
      assert.equal(up[2], "2", up[0]);
      // The node's side, from IFLA_BOND_AD_INFO: both ports in its aggregator, the peer as partner.
      const lacp = (d: GetDoc) =>
        d.spec.lacp as { ports?: number; partnerMac?: string } | undefined;
      const bond = await poll(
        "links",
        (d) => d.metadata.id === LACP_BOND && lacp(d)?.ports === 2,
        30_000,
      );
      assert.equal(bond.spec.bondMode, "802.3ad", JSON.stringify(bond.spec));
      assert.equal(lacp(bond)?.partnerMac, PEER_BOND_MAC, JSON.stringify(bond.spec));
      assert.equal(up[3], String(bond.spec.mac).toLowerCase(), "the peer's partner is bond1");
      // The peer's view of the node's ports, logged, not asserted: its bonding file is read the
      // moment the aggregator first holds both ports, when the partner state can still be EXPIRED
      // (0x80), which sets LACP_TIMEOUT (0x02) whatever rate the node sends (run 2 read 199).
      await c.peer.waitFor(/PEER BOND END/, 10_000);
      const states = partnerPortStates(await Deno.readTextFile(c.peer.consoleLog));
      console.log(`the peer's partner port states at aggregation: ${states.join(", ")}`);
      for (const mac of NODE_LACP_MACS) {
        await poll("links", (d) => d.spec.permMac === mac && d.spec.master === LACP_BOND, 10_000);
      }
      const vlan = await poll("links", (d) => d.metadata.id === LACP_VLAN, 10_000);
      assert.equal(vlan.spec.vlanId, PEER_VLAN, JSON.stringify(vlan.spec));

      const lease = await poll(
        "dhcp",
        (d) => d.metadata.id === LACP_VLAN && d.spec.state === "bound",
        90_000,
      );
      figures.vlanLeaseAfterPeerStartS = secs(performance.now() - c.peerStart);
      const address = String(lease.spec.address);
      const host = Number(address.split(".")[3]);
      assert.ok(
        address.startsWith(`${PEER_SUBNET}.`) && host >= 50 && host <= 99,
        `the VLAN's lease ${address} is not from the peer's range`,
      );
      await poll(
        "addresses",
        (d) => d.spec.link === LACP_VLAN && d.spec.address === address,
        30_000,
      );
      const acked = new RegExp(
        `DHCPACK\\(bond0\\.${PEER_VLAN}\\) ${address.replaceAll(".", "\\.")} `,
      );
      await c.peer.waitFor(acked, 10_000);
      console.log(
        `LACP: ${up[0]}; ${LACP_VLAN} leased ${address} from the peer (bond ${bond.spec.mac})`,
      );
    },
  );
  return figures;
}
