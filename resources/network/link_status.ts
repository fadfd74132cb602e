/**
 * LinkStatus: a link as the kernel reports it, kept current from rtnetlink
 * events, so hotplugged links show up without a resync.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const LINK_STATUS = "LinkStatus";

/** One link; the id is the link name. */
export interface LinkStatusSpec {
  readonly name: string;
  readonly index: number;
  /** `ether`, `loopback`, or `arphrd-<n>` for other hardware types. */
  readonly type: string;
  /** Driver kind (`veth`, `bridge`...); empty for a physical NIC. */
  readonly kind: string;
  /** Empty when the link has none. */
  readonly mac: string;
  /** A NIC's own MAC (a bond port's `mac` is the bond's); MAC selectors match this. */
  readonly permMac?: string;
  readonly mtu: number;
  /** Administratively up. */
  readonly up: boolean;
  /** RFC 2863 operational state (`up`, `down`, `lowerlayerdown`, `unknown`...). */
  readonly operstate: string;
  /** A physical NIC: an Ethernet link without a driver kind. */
  readonly physical: boolean;
  /** Name of the bond or bridge this link is a port of; empty when none. */
  readonly master: string;
  /** Created by machined (its alias is `machined`): the only links it deletes. */
  readonly ours: boolean;
  /** A VLAN's 802.1Q id. */
  readonly vlanId?: number;
  /** A bond's mode (`active-backup`, `802.3ad`...). */
  readonly bondMode?: string;
  /** A bridge's spanning tree state. */
  readonly stp?: boolean;
  /** An 802.3ad bond's active aggregator: its id, its ports, the LACP partner's system MAC. */
  readonly lacp?: {
    readonly aggregator: number;
    readonly ports: number;
    readonly partnerMac: string;
  };
}

/**
 * One line on what kind of link it is: `vlan 42`, `802.3ad`,
 * `802.3ad, 2 ports, partner 52:54:00:70:00:01`, `stp on`, or empty.
 */
export function linkDetail(s: LinkStatusSpec): string {
  if (s.vlanId !== undefined) return `vlan ${s.vlanId}`;
  if (s.lacp !== undefined) {
    const partner = /^[0:]*$/.test(s.lacp.partnerMac)
      ? "no partner"
      : `partner ${s.lacp.partnerMac}`;
    return `${s.bondMode ?? "802.3ad"}, ${s.lacp.ports} ports, ${partner}`;
  }
  if (s.bondMode !== undefined) return s.bondMode;
  if (s.stp !== undefined) return `stp ${s.stp ? "on" : "off"}`;
  return "";
}

export const linkStatusDescriptor: ResourceDescriptor<typeof LINK_STATUS, LinkStatusSpec> = {
  type: LINK_STATUS,
  namespace: "network",
  aliases: ["linkstatuses", "link", "links"],
  description: "Links as the kernel reports them",
  columns: [
    { header: "INDEX", value: (s) => String(s.index) },
    { header: "TYPE", value: (s) => s.kind || s.type },
    { header: "MAC", value: (s) => s.mac },
    { header: "MTU", value: (s) => String(s.mtu) },
    { header: "OPER", value: (s) => s.operstate },
    { header: "MASTER", value: (s) => s.master },
    { header: "DETAIL", value: linkDetail },
  ],
};
