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
  readonly mtu: number;
  /** Administratively up. */
  readonly up: boolean;
  /** RFC 2863 operational state (`up`, `down`, `lowerlayerdown`, `unknown`...). */
  readonly operstate: string;
  /** A physical NIC: an Ethernet link without a driver kind. */
  readonly physical: boolean;
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
  ],
};
