/**
 * A stateful in-memory kernel for network controllers' tests: links (veth
 * pairs with peers), addresses, connected and static routes, change events
 * and DHCP sockets (IPv4 and IPv6) that deliver datagrams across veth pairs. It follows the
 * rules of `fake_rules.ts` and passes the same conformance suite as the
 * native backend. Not modelled: the local routing table, IPv6 DAD completion
 * (addresses stay TENTATIVE unless added with NODAD), routing of unicast
 * datagrams beyond a veth pair, IPv6 multicast group membership.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import type {
  AddressInfo,
  AddressSpec,
  DhcpSocket,
  EventGroup,
  LacpInfo,
  LinkCreateSpec,
  LinkInfo,
  NetworkBackend,
  NetworkEvent,
  NetworkSubscription,
  RouteInfo,
  RouteSpec,
} from "./backend.ts";
import { IFA_F, IFF, PROTO, RTN, SCOPE, TABLE } from "./backend.ts";
import { canonicalIp, formatIp, maskIp, parseIp, prefixContains } from "./ip.ts";
import {
  checkRouteSpec,
  fail,
  fakeMac,
  ipv6Scope,
  linkLocalFromMac,
  routeFromSpec,
  routeMatchesDelete,
  sameRouteKey,
  specIp,
  vethOperstate,
} from "./fake_rules.ts";
import { createdLinkInfo, enslaveError, virtualOperstate } from "./fake_links.ts";
import { FakeDhcpSocket, FakeSubscription } from "./fake_sockets.ts";
import { type Ipv6ConfKey, ipv6ConfPath } from "./ipv6_conf.ts";

export { FakeDhcpSocket } from "./fake_sockets.ts";

/** What a seeded link looks like. */
export interface FakeLinkSeed {
  name: string;
  kind?: string;
  mac?: string;
  mtu?: number;
  minMtu?: number;
  maxMtu?: number;
  up?: boolean;
}

interface FakeLink {
  info: LinkInfo;
  peer?: string;
}

const FOREVER = 0xffffffff;

/** The fake network backend. Seed it, drive it, inspect it. */
export class FakeNetworkBackend implements NetworkBackend {
  /** Arm failures per operation name (`setLinkUp`, `addAddress`, ...). */
  readonly faults = new FaultInjector();
  #links = new Map<string, FakeLink>();
  #addresses: AddressInfo[] = [];
  #routes: RouteInfo[] = [];
  #subs = new Set<FakeSubscription>();
  #sockets = new Set<FakeDhcpSocket>();
  #nextIndex = 1;
  /** Per-link IPv6 settings written; unwritten keys read as `default`'s. */
  #ipv6Conf = new Map<string, Map<Ipv6ConfKey, number>>();
  /** The `default` and `all` pseudo-links: the kernel's defaults, never written by the API. */
  static readonly IPV6_CONF_DEFAULTS: Readonly<Record<Ipv6ConfKey, number>> = {
    accept_ra: 1,
    autoconf: 1,
  };

  /** Link kinds the simulated kernel can create (others: EOPNOTSUPP). */
  readonly kinds: ReadonlySet<string>;

  constructor(options: { loopback?: boolean; kinds?: readonly string[] } = {}) {
    this.kinds = new Set(options.kinds ?? ["vlan", "bond", "bridge"]);
    if (options.loopback ?? true) {
      this.addLink({ name: "lo", mac: "00:00:00:00:00:00", mtu: 65536 });
      const lo = this.#links.get("lo")!.info;
      lo.hwType = 772;
      lo.flags = IFF.LOOPBACK;
    }
  }

  // ---- seeders -------------------------------------------------------------

  /** Add a link (a physical NIC unless `kind` says otherwise). */
  addLink(seed: FakeLinkSeed): LinkInfo {
    if (this.#links.has(seed.name)) fail("RTM_NEWLINK", "EEXIST", seed.name);
    const index = this.#nextIndex++;
    const info: LinkInfo = {
      index,
      name: seed.name,
      hwType: 1,
      mac: seed.mac ?? fakeMac(index),
      mtu: seed.mtu ?? 1500,
      minMtu: seed.minMtu ?? 68,
      maxMtu: seed.maxMtu ?? 65535,
      flags: IFF.BROADCAST | IFF.MULTICAST,
      up: false,
      operstate: "down",
    };
    if (seed.kind) info.kind = seed.kind;
    else if (seed.name !== "lo") info.permMac = info.mac;
    this.#links.set(seed.name, { info });
    this.#emitLink(info, false);
    if (seed.up) this.#setUp(seed.name, true);
    return structuredClone(info);
  }

  /** Add a veth pair, both ends down. */
  addVethPair(a: string, b: string): [LinkInfo, LinkInfo] {
    this.addLink({ name: a, kind: "veth" });
    this.addLink({ name: b, kind: "veth" });
    const la = this.#links.get(a)!, lb = this.#links.get(b)!;
    la.peer = b;
    lb.peer = a;
    la.info.parentIndex = lb.info.index;
    lb.info.parentIndex = la.info.index;
    return [structuredClone(la.info), structuredClone(lb.info)];
  }

  /**
   * Remove a link with its addresses and routes (a veth takes its peer along,
   * a parent its VLANs; a master's ports are released).
   */
  removeLink(name: string): void {
    const l = this.#link("RTM_DELLINK", name);
    const names = l.peer ? [name, l.peer] : [name];
    for (const n of names) {
      const link = this.#links.get(n);
      if (!link) continue;
      for (const other of [...this.#links.values()]) {
        if (other.info.masterIndex === link.info.index) this.#release(other);
        if (other.info.kind === "vlan" && other.info.parentIndex === link.info.index) {
          this.removeLink(other.info.name);
        }
      }
      this.#dropAddresses((a) => a.index === link.info.index);
      this.#dropRoutes((r) => r.oif === link.info.index);
      this.#links.delete(n);
      this.#ipv6Conf.delete(n);
      this.#emitLink(link.info, true);
    }
  }

  /**
   * Simulate an LACP partner answering an 802.3ad bond: the bond's active
   * aggregator becomes `lacp`, with a link event (the kernel's lower-state
   * change notification). @throws SysError ENODEV for an unknown bond.
   */
  setLacp(bond: string, lacp: LacpInfo): void {
    const l = this.#link("RTM_NEWLINK", bond);
    l.info.lacp = { ...lacp };
    this.#emitLink(l.info, false);
  }

  /** Number of open DHCP sockets (to check that callers close them). */
  get openSockets(): number {
    return this.#sockets.size;
  }

  // ---- NetworkBackend ------------------------------------------------------

  listLinks(): Promise<LinkInfo[]> {
    this.faults.check("listLinks");
    return Promise.resolve([...this.#links.values()].map((l) => structuredClone(l.info)));
  }

  listAddresses(): Promise<AddressInfo[]> {
    this.faults.check("listAddresses");
    return Promise.resolve(structuredClone(this.#addresses));
  }

  listRoutes(): Promise<RouteInfo[]> {
    this.faults.check("listRoutes");
    return Promise.resolve(structuredClone(this.#routes));
  }

  setLinkUp(link: string, up: boolean): Promise<void> {
    return this.#run("setLinkUp", [link, up], () => {
      this.#link("RTM_SETLINK", link);
      this.#setUp(link, up);
    });
  }

  async getIpv6Conf(link: string, key: Ipv6ConfKey): Promise<number> {
    await this.#run("getIpv6Conf", [link, key], () => {
      ipv6ConfPath("/proc/sys/net", link, key);
      this.#link("read", link);
    });
    return this.ipv6ConfOf(link)[key];
  }

  setIpv6Conf(link: string, key: Ipv6ConfKey, value: number): Promise<void> {
    return this.#run("setIpv6Conf", [link, key, value], () => {
      ipv6ConfPath("/proc/sys/net", link, key);
      this.#link("write", link);
      const conf = this.#ipv6Conf.get(link) ?? new Map();
      conf.set(key, value);
      this.#ipv6Conf.set(link, conf);
    });
  }

  /** Inspector: a link's IPv6 settings (or `default`'s / `all`'s, which only the kernel sets). */
  ipv6ConfOf(link: string): Record<Ipv6ConfKey, number> {
    const conf = this.#ipv6Conf.get(link);
    const d = FakeNetworkBackend.IPV6_CONF_DEFAULTS;
    return {
      accept_ra: conf?.get("accept_ra") ?? d.accept_ra,
      autoconf: conf?.get("autoconf") ?? d.autoconf,
    };
  }

  setLinkMtu(link: string, mtu: number): Promise<void> {
    return this.#run("setLinkMtu", [link, mtu], () => {
      const l = this.#link("RTM_SETLINK", link).info;
      if (mtu < (l.minMtu ?? 68)) fail("RTM_SETLINK", "EINVAL", `${link}: mtu less than minimum`);
      if (mtu > (l.maxMtu ?? 65535)) fail("RTM_SETLINK", "EINVAL", `${link}: mtu above maximum`);
      if (l.mtu === mtu) return;
      l.mtu = mtu;
      this.#emitLink(l, false);
    });
  }

  createLink(spec: LinkCreateSpec): Promise<void> {
    return this.#run("createLink", [spec], () => {
      const op = "RTM_NEWLINK";
      if (!this.kinds.has(spec.kind)) fail(op, "EOPNOTSUPP", `${spec.name}: kind ${spec.kind}`);
      if (this.#links.has(spec.name)) fail(op, "EEXIST", spec.name);
      const parent = spec.kind === "vlan" ? this.#link(op, spec.parent).info : undefined;
      this.addLink({ name: spec.name, kind: spec.kind, mac: parent?.mac });
      const created = this.#links.get(spec.name)!.info;
      Object.assign(created, createdLinkInfo(spec, parent));
      this.#emitLink(created, false);
    });
  }

  deleteLink(link: string): Promise<void> {
    return this.#run("deleteLink", [link], () => this.removeLink(link));
  }

  setLinkMaster(link: string, master: string | undefined): Promise<void> {
    return this.#run("setLinkMaster", [link, master], () => {
      const op = "RTM_SETLINK";
      const l = this.#link(op, link);
      const m = master === undefined ? undefined : this.#link(op, master).info;
      if (l.info.masterIndex === m?.index) return;
      if (m) {
        const refusal = enslaveError(l.info, m);
        if (refusal) fail(op, refusal[0], `${link}: ${refusal[1]}`);
      }
      if (l.info.masterIndex !== undefined) this.#release(l);
      if (!m) return;
      l.info.masterIndex = m.index;
      // A bond opens its port and gives it the bond's MAC (the first port's).
      if (m.kind === "bond") {
        const first = ![...this.#links.values()].some((x) =>
          x !== l && x.info.masterIndex === m.index
        );
        if (first && l.info.mac) m.mac = l.info.mac;
        else if (m.mac) l.info.mac = m.mac;
        this.#setUp(link, true);
      }
      this.#refreshVirtual();
      this.#emitLink(l.info, false);
    });
  }

  addAddress(spec: AddressSpec): Promise<void> {
    return this.#run("addAddress", [spec], () => {
      const op = "RTM_NEWADDR";
      const ip = specIp(op, spec.address, spec);
      const l = this.#link(op, spec.link).info;
      const address = formatIp(ip.bytes);
      const v6 = ip.family === "inet6";
      const mine = this.#addresses.filter((a) => a.index === l.index && a.family === ip.family);
      const dup = mine.find((a) => a.address === address && (v6 || a.prefixLen === spec.prefixLen));
      if (dup) fail(op, "EEXIST", `${address}/${spec.prefixLen} on ${spec.link}`);
      const net = maskIp(ip.bytes, spec.prefixLen);
      const secondary = !v6 && mine.some((a) =>
        a.prefixLen === spec.prefixLen &&
        prefixContains(net, spec.prefixLen, parseIp(a.address)!.bytes)
      );
      const extra = spec.flags ?? 0;
      const a: AddressInfo = {
        index: l.index,
        family: ip.family,
        address,
        prefixLen: spec.prefixLen,
        scope: v6 ? ipv6Scope(address) : spec.scope ?? SCOPE.UNIVERSE,
        flags: IFA_F.PERMANENT | extra | (secondary ? IFA_F.SECONDARY : 0) |
          (v6 && !(extra & IFA_F.NODAD) ? IFA_F.TENTATIVE : 0),
        validLifetime: spec.validLifetime ?? FOREVER,
        preferredLifetime: spec.preferredLifetime ?? spec.validLifetime ?? FOREVER,
      };
      if (spec.validLifetime !== undefined) a.flags &= ~IFA_F.PERMANENT;
      if (!v6) a.label = spec.label ?? spec.link;
      if (spec.broadcast) a.broadcast = canonicalIp(spec.broadcast);
      this.#addresses.push(a);
      this.#emit({ kind: "address", removed: false, address: a });
      if (l.up) this.#addConnectedRoute(a);
    });
  }

  deleteAddress(spec: AddressSpec): Promise<void> {
    return this.#run("deleteAddress", [spec], () => {
      const op = "RTM_DELADDR";
      const ip = specIp(op, spec.address, spec);
      const l = this.#link(op, spec.link).info;
      const address = formatIp(ip.bytes);
      const a = this.#addresses.find((x) =>
        x.index === l.index && x.address === address && x.prefixLen === spec.prefixLen
      );
      if (!a) fail(op, "EADDRNOTAVAIL", `${address}/${spec.prefixLen} on ${spec.link}`);
      const net = maskIp(ip.bytes, a.prefixLen);
      const primary = a.family === "inet" && !(a.flags & IFA_F.SECONDARY);
      // Without promote_secondaries, deleting a primary takes its secondaries along.
      this.#dropAddresses((x) =>
        x === a ||
        (primary && x.index === a.index && x.family === "inet" &&
          (x.flags & IFA_F.SECONDARY) !== 0 && x.prefixLen === a.prefixLen &&
          prefixContains(net, a.prefixLen, parseIp(x.address)!.bytes))
      );
    });
  }

  addRoute(spec: RouteSpec): Promise<void> {
    return this.#run("addRoute", [spec], () => {
      const op = "RTM_NEWROUTE";
      checkRouteSpec(op, spec);
      let oif = spec.link === undefined ? undefined : this.#link(op, spec.link).info.index;
      const gw = spec.gateway === undefined ? undefined : parseIp(spec.gateway)!;
      if (gw) {
        const linkLocal = gw.family === "inet6" && ipv6Scope(spec.gateway!) === SCOPE.LINK;
        if (linkLocal && oif === undefined) fail(op, "EINVAL", "Egress device not specified");
        if (!linkLocal) {
          const via = this.#routes.find((r) =>
            r.protocol === PROTO.KERNEL && r.table === TABLE.MAIN && r.family === gw.family &&
            r.dst !== undefined && (oif === undefined || r.oif === oif) &&
            prefixContains(parseIp(r.dst)!.bytes, r.dstLen, gw.bytes)
          );
          if (!via) {
            fail(op, gw.family === "inet" ? "ENETUNREACH" : "EHOSTUNREACH", spec.gateway!);
          }
          oif ??= via.oif;
        }
      }
      const route = routeFromSpec(spec, oif);
      if (this.#routes.some((r) => sameRouteKey(r, route))) {
        fail(op, "EEXIST", `${spec.dst ?? "default"}/${spec.dstLen ?? 0}`);
      }
      this.#routes.push(route);
      this.#emit({ kind: "route", removed: false, route });
    });
  }

  deleteRoute(spec: RouteSpec): Promise<void> {
    return this.#run("deleteRoute", [spec], () => {
      const op = "RTM_DELROUTE";
      checkRouteSpec(op, spec);
      const oif = spec.link === undefined ? undefined : this.#link(op, spec.link).info.index;
      const r = this.#routes.find((x) => routeMatchesDelete(x, spec, oif));
      if (!r) fail(op, "ESRCH", `${spec.dst ?? "default"}/${spec.dstLen ?? 0}`);
      this.#dropRoutes((x) => x === r);
    });
  }

  subscribe(groups: readonly EventGroup[]): NetworkSubscription {
    this.faults.check("subscribe", [groups]);
    const sub = new FakeSubscription(new Set(groups), (s) => this.#subs.delete(s));
    this.#subs.add(sub);
    return sub;
  }

  openDhcpSocket(link: string, port = 68): DhcpSocket {
    this.faults.check("openDhcpSocket", [link, port]);
    return this.#openSocket(link, port, "inet");
  }

  openDhcp6Socket(link: string, port = 546): DhcpSocket {
    this.faults.check("openDhcp6Socket", [link, port]);
    return this.#openSocket(link, port, "inet6");
  }

  /**
   * Deliver a datagram sent on `link` (called by FakeDhcpSocket) to the veth
   * peer's sockets of the same family bound to `port`: IPv4 to
   * 255.255.255.255 or an address of the peer; IPv6 to any link-scope
   * multicast group (ff02::/16; group membership is not modelled) or an
   * address of the peer, including its link-local one, with the sender's
   * link-local address as the source (none: EADDRNOTAVAIL, as the kernel
   * fails the send; TENTATIVE is not modelled here either).
   */
  deliver(from: FakeDhcpSocket, data: Uint8Array, to: string, port: number): void {
    const l = this.#link("sendto", from.link);
    const dst = parseIp(to);
    if (dst?.family !== from.family) {
      fail("sendto", "EAFNOSUPPORT", `${to} on a ${from.family} socket`);
    }
    if (!l.info.up) fail("sendto", "ENETUNREACH", `${to}:${port} via ${from.link}`);
    const v6 = dst.family === "inet6";
    const src = this.#addresses.find((a) =>
      a.index === l.info.index && a.family === dst.family &&
      (!v6 || a.scope === SCOPE.LINK)
    );
    if (v6 && !src) {
      fail("sendto", "EADDRNOTAVAIL", `${to}:${port} via ${from.link}: no link-local address`);
    }
    const peer = l.peer ? this.#links.get(l.peer) : undefined;
    if (!peer || !peer.info.up) return; // dropped on the wire
    const address = formatIp(dst.bytes);
    const group = v6
      ? dst.bytes[0] === 0xff && (dst.bytes[1] & 0x0f) === 2
      : address === "255.255.255.255";
    const toMe = (s: FakeDhcpSocket) => {
      if (s.link !== peer.info.name || s.port !== port || s.family !== dst.family) return false;
      return group ||
        this.#addresses.some((a) => a.index === peer.info.index && a.address === address);
    };
    for (const s of this.#sockets) {
      if (toMe(s)) s.push({ data: data.slice(), from: src?.address ?? "0.0.0.0", port: from.port });
    }
  }

  // ---- internals -----------------------------------------------------------

  async #run(op: string, args: unknown[], f: () => void): Promise<void> {
    await Promise.resolve();
    this.faults.check(op, args);
    f();
  }

  #openSocket(link: string, port: number, family: "inet" | "inet6"): DhcpSocket {
    this.#link("SO_BINDTODEVICE", link);
    const s = new FakeDhcpSocket(link, port, this, (x) => this.#sockets.delete(x), family);
    this.#sockets.add(s);
    return s;
  }

  #link(op: string, name: string): FakeLink {
    const l = this.#links.get(name);
    if (!l) fail(op, "ENODEV", name);
    return l;
  }

  #setUp(name: string, up: boolean): void {
    const l = this.#links.get(name)!;
    if (l.info.up === up) return;
    l.info.up = up;
    if (up) l.info.flags |= IFF.UP;
    else l.info.flags &= ~IFF.UP;
    const affected = l.peer ? [l, this.#links.get(l.peer)!] : [l];
    for (const x of affected) this.#refreshOperstate(x);
    if (up) {
      for (const a of this.#addresses) if (a.index === l.info.index) this.#addConnectedRoute(a);
    } else {
      // The kernel flushes IPv6 addresses and every route through a link going down.
      this.#dropAddresses((a) => a.index === l.info.index && a.family === "inet6");
      this.#dropRoutes((r) => r.oif === l.info.index);
    }
    this.#emitLink(l.info, false);
    if (l.peer) this.#emitLink(this.#links.get(l.peer)!.info, false);
    this.#refreshVirtual();
  }

  #release(l: FakeLink): void {
    delete l.info.masterIndex;
    this.#refreshVirtual();
    this.#emitLink(l.info, false);
  }

  /** Masters follow their ports, VLANs their parent (two passes: a VLAN on a bond). */
  #refreshVirtual(): void {
    for (let pass = 0; pass < 2; pass++) {
      const all = [...this.#links.values()].map((x) => x.info);
      for (const i of all) {
        if (i.kind !== "bond" && i.kind !== "bridge" && i.kind !== "vlan") continue;
        const next = virtualOperstate(i, all);
        if (next === i.operstate) continue;
        i.operstate = next;
        const running = next === "up" || (next === "unknown" && i.up);
        i.flags = running
          ? i.flags | IFF.RUNNING | IFF.LOWER_UP
          : i.flags & ~(IFF.RUNNING | IFF.LOWER_UP);
        this.#emitLink(i, false);
      }
    }
  }

  #refreshOperstate(l: FakeLink): void {
    const i = l.info;
    const was = i.operstate;
    if (i.hwType === 772) i.operstate = i.up ? "unknown" : "down";
    else if (i.kind === "bond" || i.kind === "bridge" || i.kind === "vlan") {
      i.operstate = virtualOperstate(i, [...this.#links.values()].map((x) => x.info));
    } else i.operstate = vethOperstate(i.up, l.peer ? this.#links.get(l.peer)!.info.up : undefined);
    const running = i.operstate === "up" || (i.operstate === "unknown" && i.up);
    i.flags = running
      ? i.flags | IFF.RUNNING | IFF.LOWER_UP
      : i.flags & ~(IFF.RUNNING | IFF.LOWER_UP);
    if (was !== "up" && i.operstate === "up" && i.mac && i.hwType === 1) {
      const ll = linkLocalFromMac(i.mac);
      if (!this.#addresses.some((a) => a.index === i.index && a.address === ll)) {
        const a: AddressInfo = {
          index: i.index,
          family: "inet6",
          address: ll,
          prefixLen: 64,
          scope: SCOPE.LINK,
          flags: IFA_F.PERMANENT | IFA_F.TENTATIVE,
          validLifetime: FOREVER,
          preferredLifetime: FOREVER,
        };
        this.#addresses.push(a);
        this.#emit({ kind: "address", removed: false, address: a });
        this.#addConnectedRoute(a);
      }
    }
  }

  #addConnectedRoute(a: AddressInfo): void {
    const v6 = a.family === "inet6";
    if (!v6 && ((a.flags & IFA_F.SECONDARY) || a.prefixLen >= 32)) return;
    if (v6 && ((a.flags & IFA_F.NOPREFIXROUTE) || a.prefixLen >= 128)) return;
    const dst = formatIp(maskIp(parseIp(a.address)!.bytes, a.prefixLen));
    const r: RouteInfo = {
      family: a.family,
      dst,
      dstLen: a.prefixLen,
      oif: a.index,
      table: TABLE.MAIN,
      protocol: PROTO.KERNEL,
      scope: v6 ? SCOPE.UNIVERSE : SCOPE.LINK,
      type: RTN.UNICAST,
    };
    if (v6) r.metric = 256;
    else r.prefsrc = a.address;
    if (this.#routes.some((x) => sameRouteKey(x, r) && x.oif === r.oif)) return;
    this.#routes.push(r);
    this.#emit({ kind: "route", removed: false, route: r });
  }

  #dropAddresses(pred: (a: AddressInfo) => boolean): void {
    const gone = this.#addresses.filter(pred);
    this.#addresses = this.#addresses.filter((a) => !pred(a));
    for (const a of gone) {
      this.#emit({ kind: "address", removed: true, address: a });
      this.#dropRoutes((r) =>
        r.protocol === PROTO.KERNEL && r.oif === a.index && r.family === a.family &&
        r.dstLen === a.prefixLen &&
        r.dst === formatIp(maskIp(parseIp(a.address)!.bytes, a.prefixLen)) &&
        !this.#addresses.some((o) =>
          o.index === a.index && o.family === a.family && o.prefixLen === a.prefixLen &&
          formatIp(maskIp(parseIp(o.address)!.bytes, o.prefixLen)) === r.dst
        )
      );
    }
  }

  #dropRoutes(pred: (r: RouteInfo) => boolean): void {
    const gone = this.#routes.filter(pred);
    this.#routes = this.#routes.filter((r) => !pred(r));
    for (const r of gone) this.#emit({ kind: "route", removed: true, route: r });
  }

  #emitLink(info: LinkInfo, removed: boolean): void {
    this.#emit({ kind: "link", removed, link: info });
  }

  #emit(e: NetworkEvent): void {
    for (const s of this.#subs) s.offer(e);
  }
}
