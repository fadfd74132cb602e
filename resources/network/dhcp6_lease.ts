/**
 * Dhcp6Lease: the DHCPv6 client's state on one link and, once bound, what it
 * leased (one IA_NA address as a /128, DNS servers, search domains). The
 * address and resolver config controllers merge a bound lease into their
 * specs; routes are not leased in DHCPv6 (they come from router
 * advertisements).
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const DHCP6_LEASE = "Dhcp6Lease";

/** RFC 8415 client states (stateful, IA_NA). */
export type Dhcp6State = "soliciting" | "requesting" | "bound" | "renewing" | "rebinding";

/** One link's DHCPv6 lease; the id is the link name. */
export interface Dhcp6LeaseSpec {
  readonly link: string;
  readonly state: Dhcp6State;
  /** The rest is set once a REPLY granted an address (bound, renewing, rebinding). */
  readonly address?: string;
  /** Always 128 when set (RFC 8415 §21.6). */
  readonly prefixLen?: number;
  /** The server's DUID, colon-separated hex. */
  readonly server?: string;
  readonly dnsServers?: readonly string[];
  readonly domains?: readonly string[];
  readonly preferredSeconds?: number;
  readonly validSeconds?: number;
  /** ISO times ("never" for an infinite lifetime). */
  readonly acquired?: string;
  readonly renewAt?: string;
  readonly rebindAt?: string;
  readonly expiresAt?: string;
}

/** True when the lease carries an address to use. */
export function lease6Bound(l: Dhcp6LeaseSpec): boolean {
  return l.address !== undefined && l.prefixLen !== undefined &&
    (l.state === "bound" || l.state === "renewing" || l.state === "rebinding");
}

export const dhcp6LeaseDescriptor: ResourceDescriptor<typeof DHCP6_LEASE, Dhcp6LeaseSpec> = {
  type: DHCP6_LEASE,
  namespace: "network",
  aliases: ["dhcp6lease", "dhcp6leases", "dhcp6"],
  description: "DHCPv6 client state and IA_NA lease per link",
  columns: [
    { header: "STATE", value: (s) => s.state },
    {
      header: "ADDRESS",
      value: (s) => s.address === undefined ? "" : `${s.address}/${s.prefixLen}`,
    },
    { header: "DNS", value: (s) => (s.dnsServers ?? [])[0] ?? "" },
    { header: "SERVER", value: (s) => s.server ?? "" },
    { header: "EXPIRES", value: (s) => s.expiresAt ?? "" },
  ],
};
