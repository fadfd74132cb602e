/**
 * {@link NetworkBackend} over rtnetlink, through native-ops. The only file in
 * platform/network that imports the addon. Needs CAP_NET_ADMIN for changes.
 * @module
 */
import { loadNative, toSysError } from "../../native-ops/mod.ts";
import type {
  AddressInfo,
  AddressSpec,
  BondMode,
  Datagram,
  DhcpSocket,
  EventGroup,
  Family,
  LacpRate,
  LinkCreateSpec,
  LinkInfo,
  NetworkBackend,
  NetworkEvent,
  NetworkSubscription,
  OperState,
  RouteInfo,
  RouteSpec,
  XmitHashPolicy,
} from "./backend.ts";
import { IFF } from "./backend.ts";
import { type Ipv6ConfKey, readIpv6Conf, writeIpv6Conf } from "./ipv6_conf.ts";

// Shapes returned by the addon (see native-ops/src/napi_netlink.rs).
interface NlLink {
  index: number;
  name: string;
  kind?: string;
  hwType: number;
  mac?: string;
  permMac?: string;
  mtu: number;
  minMtu?: number;
  maxMtu?: number;
  flags: number;
  operstate: string;
  master?: number;
  parent?: number;
  alias?: string;
  vlanId?: number;
  bondMode?: string;
  miimon?: number;
  lacpRate?: string;
  xmitHashPolicy?: string;
  stp?: boolean;
  lacpAggregator?: number;
  lacpPorts?: number;
  lacpPartnerMac?: string;
}
interface NlAddress {
  index: number;
  family: Family;
  address: string;
  peer?: string;
  prefixLen: number;
  scope: number;
  flags: number;
  label?: string;
  broadcast?: string;
  validLft?: number;
  preferredLft?: number;
}
interface NlRoute {
  family: Family;
  dst?: string;
  dstLen: number;
  gateway?: string;
  oif?: number;
  priority?: number;
  prefsrc?: string;
  table: number;
  protocol: number;
  scope: number;
  routeType: number;
}
interface NlEvent {
  kind: "link" | "address" | "route";
  removed: boolean;
  link?: NlLink;
  address?: NlAddress;
  route?: NlRoute;
}
interface NlSubscription {
  next(timeoutMs: number): Promise<NlEvent[] | null>;
  close(): void;
}
interface NlDhcpSocket {
  send(data: Uint8Array, to: string, port: number): Promise<void>;
  recv(timeoutMs: number): Promise<{ data: Uint8Array; from: string; port: number } | null>;
  close(): void;
}

/** Methods of addon objects are not wrapped by loadNative; map their errors here. */
function sys<T>(p: Promise<T>): Promise<T> {
  return p.catch((e) => {
    throw toSysError(e);
  });
}

function drop<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** Convert the addon's link object. */
export function toLinkInfo(l: NlLink): LinkInfo {
  return drop({
    index: l.index,
    name: l.name,
    kind: l.kind,
    hwType: l.hwType,
    mac: l.mac,
    permMac: l.permMac,
    mtu: l.mtu,
    minMtu: l.minMtu,
    maxMtu: l.maxMtu,
    flags: l.flags,
    up: (l.flags & IFF.UP) !== 0,
    operstate: l.operstate as OperState,
    masterIndex: l.master,
    parentIndex: l.parent,
    alias: l.alias,
    vlanId: l.vlanId,
    bondMode: l.bondMode as BondMode | undefined,
    miimon: l.miimon,
    lacpRate: l.lacpRate as LacpRate | undefined,
    xmitHashPolicy: l.xmitHashPolicy as XmitHashPolicy | undefined,
    stp: l.stp,
    lacp: l.lacpAggregator === undefined ? undefined : {
      aggregator: l.lacpAggregator,
      ports: l.lacpPorts ?? 0,
      partnerMac: l.lacpPartnerMac ?? "00:00:00:00:00:00",
    },
  });
}

/** Convert the addon's address object. */
export function toAddressInfo(a: NlAddress): AddressInfo {
  return drop({
    index: a.index,
    family: a.family,
    address: a.address,
    prefixLen: a.prefixLen,
    peer: a.peer,
    scope: a.scope,
    flags: a.flags,
    label: a.label,
    broadcast: a.broadcast,
    validLifetime: a.validLft,
    preferredLifetime: a.preferredLft,
  });
}

/** Convert the addon's route object. */
export function toRouteInfo(r: NlRoute): RouteInfo {
  return drop({
    family: r.family,
    dst: r.dst,
    dstLen: r.dstLen,
    gateway: r.gateway,
    oif: r.oif,
    metric: r.priority,
    prefsrc: r.prefsrc,
    table: r.table,
    protocol: r.protocol,
    scope: r.scope,
    type: r.routeType,
  });
}

function toEvent(e: NlEvent): NetworkEvent | undefined {
  if (e.kind === "link" && e.link) {
    return { kind: "link", removed: e.removed, link: toLinkInfo(e.link) };
  }
  if (e.kind === "address" && e.address) {
    return { kind: "address", removed: e.removed, address: toAddressInfo(e.address) };
  }
  if (e.kind === "route" && e.route) {
    return { kind: "route", removed: e.removed, route: toRouteInfo(e.route) };
  }
  return undefined;
}

function addrArg(s: AddressSpec) {
  return {
    link: s.link,
    address: s.address,
    prefixLen: s.prefixLen,
    scope: s.scope,
    flags: s.flags,
    label: s.label,
    broadcast: s.broadcast,
    validLft: s.validLifetime,
    preferredLft: s.preferredLifetime,
  };
}

function createArg(s: LinkCreateSpec) {
  const base = { name: s.name, kind: s.kind, alias: s.alias };
  switch (s.kind) {
    case "vlan":
      return { ...base, parent: s.parent, vlanId: s.vlanId };
    case "bond":
      return {
        ...base,
        bondMode: s.mode,
        miimon: s.miimon,
        lacpRate: s.lacpRate,
        xmitHashPolicy: s.xmitHashPolicy,
      };
    case "bridge":
      return { ...base, stp: s.stp };
    case "wireguard":
      return base;
  }
}

function routeArg(s: RouteSpec) {
  return {
    family: s.family,
    dst: s.dst,
    dstLen: s.dstLen,
    gateway: s.gateway,
    link: s.link,
    metric: s.metric,
    table: s.table,
    protocol: s.protocol,
    scope: s.scope,
    routeType: s.type,
    prefsrc: s.prefsrc,
  };
}

/** Batches from the addon, handed out one event at a time. */
class NativeSubscription implements NetworkSubscription {
  #queue: NetworkEvent[] = [];
  #closed = false;
  constructor(private readonly inner: NlSubscription) {}

  async nextEvent(timeoutMs: number): Promise<NetworkEvent | undefined> {
    const deadline = performance.now() + timeoutMs;
    while (this.#queue.length === 0) {
      if (this.#closed) return undefined;
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      const batch = await sys(this.inner.next(left));
      if (batch === null) {
        this.#closed = true;
        return undefined;
      }
      for (const e of batch) {
        const ev = toEvent(e);
        if (ev) this.#queue.push(ev);
      }
    }
    return this.#queue.shift();
  }

  close(): void {
    this.#closed = true;
    this.inner.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<NetworkEvent> {
    while (!this.#closed || this.#queue.length > 0) {
      const e = await this.nextEvent(60_000);
      if (e) yield e;
    }
  }
}

class NativeDhcpSocket implements DhcpSocket {
  constructor(private readonly inner: NlDhcpSocket) {}
  send(data: Uint8Array, to = "255.255.255.255", port = 67): Promise<void> {
    return sys(this.inner.send(data, to, port));
  }
  async receive(timeoutMs: number): Promise<Datagram | undefined> {
    const d = await sys(this.inner.recv(timeoutMs));
    return d ? { data: new Uint8Array(d.data), from: d.from, port: d.port } : undefined;
  }
  close(): void {
    this.inner.close();
  }
}

/** The real network backend. */
export class NativeNetworkBackend implements NetworkBackend {
  readonly #n = loadNative();
  readonly #procSysNet: string;

  /** `procSysNet`: where `net.*` sysctls live. @default "/proc/sys/net" */
  constructor(options: { procSysNet?: string } = {}) {
    this.#procSysNet = options.procSysNet ?? "/proc/sys/net";
  }

  async listLinks(): Promise<LinkInfo[]> {
    return ((await this.#n.netlinkListLinks()) as NlLink[]).map(toLinkInfo);
  }
  async listAddresses(): Promise<AddressInfo[]> {
    return ((await this.#n.netlinkListAddresses()) as NlAddress[]).map(toAddressInfo);
  }
  async listRoutes(): Promise<RouteInfo[]> {
    return ((await this.#n.netlinkListRoutes()) as NlRoute[]).map(toRouteInfo);
  }
  async setLinkUp(link: string, up: boolean): Promise<void> {
    await this.#n.netlinkSetLinkUp(link, up);
  }
  async setLinkMtu(link: string, mtu: number): Promise<void> {
    await this.#n.netlinkSetLinkMtu(link, mtu);
  }
  getIpv6Conf(link: string, key: Ipv6ConfKey): Promise<number> {
    return readIpv6Conf(this.#procSysNet, link, key);
  }
  setIpv6Conf(link: string, key: Ipv6ConfKey, value: number): Promise<void> {
    return writeIpv6Conf(this.#procSysNet, link, key, value);
  }
  async createLink(spec: LinkCreateSpec): Promise<void> {
    await this.#n.netlinkCreateLink(createArg(spec));
  }
  async deleteLink(link: string): Promise<void> {
    await this.#n.netlinkDeleteLink(link);
  }
  async setLinkMaster(link: string, master: string | undefined): Promise<void> {
    await this.#n.netlinkSetLinkMaster(link, master);
  }
  async addAddress(spec: AddressSpec): Promise<void> {
    await this.#n.netlinkAddAddress(addrArg(spec));
  }
  async deleteAddress(spec: AddressSpec): Promise<void> {
    await this.#n.netlinkDeleteAddress(addrArg(spec));
  }
  async addRoute(spec: RouteSpec): Promise<void> {
    await this.#n.netlinkAddRoute(routeArg(spec));
  }
  async deleteRoute(spec: RouteSpec): Promise<void> {
    await this.#n.netlinkDeleteRoute(routeArg(spec));
  }
  subscribe(groups: readonly EventGroup[]): NetworkSubscription {
    return new NativeSubscription(this.#n.netlinkSubscribe([...groups]) as NlSubscription);
  }
  openDhcpSocket(link: string, port = 68): DhcpSocket {
    return new NativeDhcpSocket(this.#n.dhcpOpen(link, port) as NlDhcpSocket);
  }
  openDhcp6Socket(link: string, port = 546): DhcpSocket {
    return new NativeDhcpSocket(this.#n.dhcp6Open(link, port) as NlDhcpSocket);
  }
}
