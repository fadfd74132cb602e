/**
 * The network backend: what machined's network controllers may ask of the
 * kernel (links, addresses, routes, change events, and the DHCPv4 client
 * socket). {@link NativeNetworkBackend} speaks rtnetlink; the fake simulates a
 * small kernel. Both pass `backend_conformance.ts`.
 *
 * Idempotence, shared by both implementations (the fake mirrors the kernel):
 * - `setLinkUp` / `setLinkMtu` to the current value succeed and change nothing.
 * - `addAddress` of an address already on the link throws `SysError` EEXIST
 *   (IPv4: same address and prefix; IPv6: same address); `deleteAddress` of an
 *   absent one throws EADDRNOTAVAIL.
 * - `addRoute` of a route with the same family, table, destination and metric
 *   throws EEXIST; `deleteRoute` with no match throws ESRCH.
 * - Anything naming a missing link throws ENODEV.
 * - `createLink` of a taken name throws EEXIST; `deleteLink` of a missing one
 *   ENODEV; `setLinkMaster` to the current master (or none to none) succeeds
 *   and changes nothing, and to another master moves the link (the kernel
 *   releases it first).
 * Controllers treat EEXIST on add and EADDRNOTAVAIL/ESRCH on delete as "already
 * converged".
 * @module
 */

import type { Ipv6ConfKey } from "./ipv6_conf.ts";
export type { Ipv6ConfKey };

/** Address family. */
export type Family = "inet" | "inet6";

/** RFC 2863 operational state. */
export type OperState =
  | "unknown"
  | "notpresent"
  | "down"
  | "lowerlayerdown"
  | "testing"
  | "dormant"
  | "up";

/** IFF_* bits of {@link LinkInfo.flags}. */
export const IFF = {
  UP: 0x1,
  BROADCAST: 0x2,
  LOOPBACK: 0x8,
  POINTOPOINT: 0x10,
  RUNNING: 0x40,
  NOARP: 0x80,
  MULTICAST: 0x1000,
  LOWER_UP: 0x10000,
} as const;

/** IFA_F_* bits of {@link AddressInfo.flags}. */
export const IFA_F = {
  SECONDARY: 0x01,
  NODAD: 0x02,
  DADFAILED: 0x08,
  TENTATIVE: 0x40,
  PERMANENT: 0x80,
  NOPREFIXROUTE: 0x200,
} as const;

/** RT_SCOPE_* values. */
export const SCOPE = { UNIVERSE: 0, SITE: 200, LINK: 253, HOST: 254, NOWHERE: 255 } as const;
/** RTPROT_* values. */
export const PROTO = { UNSPEC: 0, KERNEL: 2, BOOT: 3, STATIC: 4, DHCP: 16 } as const;
/** RTN_* route types. */
export const RTN = { UNICAST: 1, LOCAL: 2, BROADCAST: 3, BLACKHOLE: 6, UNREACHABLE: 7 } as const;
/** Well-known routing tables. */
export const TABLE = { MAIN: 254, LOCAL: 255 } as const;

/** A network interface as the kernel reports it. */
export interface LinkInfo {
  index: number;
  name: string;
  /** Driver kind (`veth`, `bridge`, `dummy`...), absent for physical NICs. */
  kind?: string;
  /** ARPHRD_* (1 ether, 772 loopback). */
  hwType: number;
  mac?: string;
  /**
   * IFLA_PERM_ADDRESS: a NIC's own MAC. A bond gives its ports the bond's MAC,
   * so a port's `mac` changes while this stays; absent for virtual links.
   */
  permMac?: string;
  mtu: number;
  minMtu?: number;
  maxMtu?: number;
  /** IFF_* bits. */
  flags: number;
  /** Administratively up (IFF_UP). */
  up: boolean;
  operstate: OperState;
  /** Index of the bridge/bond this link is enslaved to. */
  masterIndex?: number;
  /** IFLA_LINK: for a veth, the peer's index; for a VLAN, its parent's. */
  parentIndex?: number;
  /** IFLA_IFALIAS; {@link MACHINED_ALIAS} on the links machined created. */
  alias?: string;
  /** A VLAN's 802.1Q id. */
  vlanId?: number;
  /** A bond's mode, as the kernel names it. */
  bondMode?: BondMode;
  /** A bond's MII link monitoring interval in ms (0: off). */
  miimon?: number;
  lacpRate?: LacpRate;
  xmitHashPolicy?: XmitHashPolicy;
  /** A bridge's spanning tree state. */
  stp?: boolean;
  /** An 802.3ad bond's active aggregator, when it has one (real kernels only; the fake has no partner). */
  lacp?: LacpInfo;
}

/**
 * An 802.3ad bond's active aggregator (IFLA_BOND_AD_INFO): whether LACP
 * found a partner and how many ports it aggregated, the facts a switch
 * misconfiguration shows up in.
 */
export interface LacpInfo {
  aggregator: number;
  ports: number;
  /** The partner's system MAC; all zeros until a partner answered. */
  partnerMac: string;
}

/**
 * The alias machined sets on every link it creates, so that it removes only
 * those: a VLAN, bond or bridge someone else made keeps its alias (or none).
 */
export const MACHINED_ALIAS = "machined";

/** Bond modes, with the kernel's names. */
export type BondMode =
  | "balance-rr"
  | "active-backup"
  | "balance-xor"
  | "broadcast"
  | "802.3ad"
  | "balance-tlb"
  | "balance-alb";
/** 802.3ad LACPDU rate. */
export type LacpRate = "slow" | "fast";
/** How a bond spreads traffic over its ports. */
export type XmitHashPolicy = "layer2" | "layer3+4" | "layer2+3" | "encap2+3" | "encap3+4";

/** A virtual link to create: an 802.1Q VLAN on `parent`, a bond, a bridge or a WireGuard interface. */
export type LinkCreateSpec =
  & { name: string; /** IFLA_IFALIAS set right after creation. */ alias?: string }
  & (
    | { kind: "vlan"; parent: string; vlanId: number }
    | {
      kind: "bond";
      /** @default balance-rr (the kernel's) */
      mode?: BondMode;
      /** @default 0 (the kernel's: no link monitoring) */
      miimon?: number;
      lacpRate?: LacpRate;
      xmitHashPolicy?: XmitHashPolicy;
    }
    | { kind: "bridge"; /** @default false */ stp?: boolean }
    /** A WireGuard interface, without keys or peers (`wg` sets those: platform/wireguard). */
    | { kind: "wireguard" }
  );

/** An address assigned to a link. */
export interface AddressInfo {
  /** Link index. */
  index: number;
  family: Family;
  /** Canonical text form (`10.0.0.1`, `fd00::1`). */
  address: string;
  prefixLen: number;
  /** Peer of a point-to-point address, when it differs from `address`. */
  peer?: string;
  scope: number;
  /** IFA_F_* bits. */
  flags: number;
  label?: string;
  broadcast?: string;
  /** Seconds; 4294967295 means forever. */
  validLifetime?: number;
  preferredLifetime?: number;
}

/** A route. */
export interface RouteInfo {
  family: Family;
  /** Absent for a default route. */
  dst?: string;
  dstLen: number;
  gateway?: string;
  /** Output link index. */
  oif?: number;
  /** Route priority; IPv6 routes always have one, IPv4 only when non-zero. */
  metric?: number;
  prefsrc?: string;
  table: number;
  protocol: number;
  scope: number;
  type: number;
}

/** An address to add or delete. */
export interface AddressSpec {
  link: string;
  address: string;
  prefixLen: number;
  /** @default universe (IPv6 derives the scope from the address) */
  scope?: number;
  /** IFA_F_* bits, e.g. NODAD. */
  flags?: number;
  /** IPv4 only. @default the link name */
  label?: string;
  broadcast?: string;
  validLifetime?: number;
  preferredLifetime?: number;
}

/** A route to add or delete. */
export interface RouteSpec {
  family: Family;
  /** Absent for a default route. */
  dst?: string;
  /** @default 0 */
  dstLen?: number;
  gateway?: string;
  link?: string;
  /** On add: @default 0 for IPv4, 1024 for IPv6. On delete: absent matches any. */
  metric?: number;
  /** @default 254 (main) */
  table?: number;
  /** On add: @default static (4). On delete: absent matches any. */
  protocol?: number;
  /** On add: @default link when a link but no gateway is given, else universe. */
  scope?: number;
  /** @default unicast */
  type?: number;
  prefsrc?: string;
}

/** Multicast groups a subscription can join. */
export type EventGroup = "link" | "ipv4-address" | "ipv6-address" | "ipv4-route" | "ipv6-route";

/** One change notification; `removed` is true for deletions. */
export type NetworkEvent =
  | { kind: "link"; removed: boolean; link: LinkInfo }
  | { kind: "address"; removed: boolean; address: AddressInfo }
  | { kind: "route"; removed: boolean; route: RouteInfo };

/**
 * A live event stream. Events are queued from the moment of subscription.
 * After overflow the native stream throws `SysError` ENOBUFS from
 * `nextEvent`: events were lost, so list again to resync.
 */
export interface NetworkSubscription extends AsyncIterable<NetworkEvent> {
  /** The next event, or undefined after `timeoutMs` or once closed. */
  nextEvent(timeoutMs: number): Promise<NetworkEvent | undefined>;
  /** Release the socket; pending and later `nextEvent` calls resolve undefined. */
  close(): void;
}

/** A received UDP datagram. */
export interface Datagram {
  data: Uint8Array;
  from: string;
  port: number;
}

/**
 * The DHCPv4 client socket: UDP on 0.0.0.0:`port` bound to one link, with
 * SO_BROADCAST, able to receive before the link has an address.
 */
export interface DhcpSocket {
  /** Send to `to`:`port`. @default 255.255.255.255:67 */
  send(data: Uint8Array, to?: string, port?: number): Promise<void>;
  /** The next datagram, or undefined after `timeoutMs` or once closed. */
  receive(timeoutMs: number): Promise<Datagram | undefined>;
  close(): void;
}

/** Everything the network controllers may ask of the kernel. */
export interface NetworkBackend {
  listLinks(): Promise<LinkInfo[]>;
  /** Every address of every link and family. */
  listAddresses(): Promise<AddressInfo[]>;
  /** Every route of every family and table (filter by `table` yourself). */
  listRoutes(): Promise<RouteInfo[]>;
  /** @throws SysError ENODEV when the link is missing. */
  setLinkUp(link: string, up: boolean): Promise<void>;
  /** @throws SysError ENODEV (missing) or EINVAL (out of range). */
  setLinkMtu(link: string, mtu: number): Promise<void>;
  /**
   * Create a VLAN, bond or bridge, down.
   * @throws SysError EEXIST (name taken), ENODEV (a VLAN's parent missing),
   * EOPNOTSUPP (the kernel has no driver for the kind), EINVAL.
   */
  createLink(spec: LinkCreateSpec): Promise<void>;
  /**
   * Delete a link: a master's ports are released, a parent's VLANs go with it.
   * @throws SysError ENODEV when missing.
   */
  deleteLink(link: string): Promise<void>;
  /**
   * Enslave `link` to the bond or bridge `master`, or release it (undefined).
   * @throws SysError ENODEV (either missing), EPERM (a bond port that is up),
   * EOPNOTSUPP (`master` cannot have ports).
   */
  setLinkMaster(link: string, master: string | undefined): Promise<void>;
  /**
   * Read a per-link IPv6 setting (`/proc/sys/net/ipv6/conf/<link>/<key>`).
   * @throws RangeError for `default` or `all`; SysError ENODEV when missing.
   */
  getIpv6Conf(link: string, key: Ipv6ConfKey): Promise<number>;
  /**
   * Write a per-link IPv6 setting; never `default` or `all` (those reach
   * every link, a Talos failure mode).
   * @throws RangeError for `default` or `all`; SysError ENODEV when missing.
   */
  setIpv6Conf(link: string, key: Ipv6ConfKey, value: number): Promise<void>;
  /** @throws SysError EEXIST, ENODEV. */
  addAddress(spec: AddressSpec): Promise<void>;
  /** @throws SysError EADDRNOTAVAIL, ENODEV. */
  deleteAddress(spec: AddressSpec): Promise<void>;
  /** @throws SysError EEXIST, ENODEV, ENETUNREACH (gateway not reachable). */
  addRoute(spec: RouteSpec): Promise<void>;
  /** @throws SysError ESRCH, ENODEV. */
  deleteRoute(spec: RouteSpec): Promise<void>;
  /** Start receiving change events for `groups`. */
  subscribe(groups: readonly EventGroup[]): NetworkSubscription;
  /**
   * Open the DHCP client socket on `link`.
   * @default port 68
   * @throws SysError ENODEV when the link is missing.
   */
  openDhcpSocket(link: string, port?: number): DhcpSocket;
  /**
   * Open the DHCPv6 client socket on `link`: UDP on [::]:`port`, IPv6 only,
   * bound to the link, multicast sent out of it. Its `send` defaults are
   * DHCPv4's, so callers name the peer (ff02::1:2, port 547).
   * @default port 546
   * @throws SysError ENODEV when the link is missing.
   */
  openDhcp6Socket(link: string, port?: number): DhcpSocket;
}
