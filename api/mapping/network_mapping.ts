/**
 * Network resource specs ⇄ their proto messages (api/proto/machined/v1/network.proto).
 * Field names match one to one; only the string unions become enums, each
 * through a table typed over the whole union.
 */
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/network_pb.ts";
import type {
  AddressSpecSpec,
  AddressStatusSpec,
  Dhcp6LeaseSpec,
  DhcpLeaseSpec,
  FirewallStatusSpec,
  HostnameSpecSpec,
  HostnameStatusSpec,
  LinkSpecSpec,
  LinkStatusSpec,
  ResolverSpecSpec,
  ResolverStatusSpec,
  RouteSpecSpec,
  RouteStatusSpec,
  WireguardStatusSpec,
} from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";
import { ResourceMappingError } from "./mapping_error.ts";

const DHCP6_STATES: readonly string[] = [
  "soliciting",
  "requesting",
  "bound",
  "renewing",
  "rebinding",
];

const family = enumPair<AddressSpecSpec["family"], pb.AddressFamily>({
  inet: pb.AddressFamily.INET,
  inet6: pb.AddressFamily.INET6,
}, "address family");
const origin = enumPair<AddressSpecSpec["origin"], pb.NetworkOrigin>({
  static: pb.NetworkOrigin.STATIC,
  dhcp: pb.NetworkOrigin.DHCP,
  dhcp6: pb.NetworkOrigin.DHCP6,
}, "network origin");
const linkOrigin = enumPair<LinkSpecSpec["origin"], pb.LinkOrigin>({
  config: pb.LinkOrigin.CONFIG,
  default: pb.LinkOrigin.DEFAULT,
}, "link origin");
const hostnameOrigin = enumPair<HostnameSpecSpec["origin"], pb.HostnameOrigin>({
  config: pb.HostnameOrigin.CONFIG,
  dhcp: pb.HostnameOrigin.DHCP,
}, "hostname origin");
const firewallAction = enumPair<FirewallStatusSpec["defaultAction"], pb.FirewallAction>({
  accept: pb.FirewallAction.ACCEPT,
  block: pb.FirewallAction.BLOCK,
}, "firewall action");
const firewallProtocol = enumPair<
  FirewallStatusSpec["rules"][number]["protocol"],
  pb.FirewallProtocol
>({
  tcp: pb.FirewallProtocol.TCP,
  udp: pb.FirewallProtocol.UDP,
}, "firewall protocol");
const dhcpState = enumPair<DhcpLeaseSpec["state"], pb.DhcpState>({
  selecting: pb.DhcpState.SELECTING,
  requesting: pb.DhcpState.REQUESTING,
  bound: pb.DhcpState.BOUND,
  renewing: pb.DhcpState.RENEWING,
  rebinding: pb.DhcpState.REBINDING,
}, "DHCP state");

/**
 * The message's fields as a plain object, without `$typeName` and without
 * unset optional fields, so optional TS members stay absent.
 */
function plain<T>(message: object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message)) {
    if (k.startsWith("$") || v === undefined) continue;
    out[k] = Array.isArray(v) ? [...v] : v;
  }
  return out as T;
}

function msg<D extends DescMessage>(schema: D, init: object): MessageShape<D> {
  // Spec objects are frozen; create() needs its own copy of arrays.
  return create(schema, plain(init) as never);
}

/** Spec → proto, per network type. */
export const networkToProto = {
  linkSpec: (s: LinkSpecSpec) =>
    msg(pb.LinkSpecSpecSchema, { ...s, origin: linkOrigin.to(s.origin) }),
  linkStatus: (s: LinkStatusSpec) => msg(pb.LinkStatusSpecSchema, s),
  addressSpec: (s: AddressSpecSpec) =>
    msg(pb.AddressSpecSpecSchema, {
      ...s,
      family: family.to(s.family),
      origin: origin.to(s.origin),
    }),
  addressStatus: (s: AddressStatusSpec) =>
    msg(pb.AddressStatusSpecSchema, { ...s, family: family.to(s.family) }),
  routeSpec: (s: RouteSpecSpec) =>
    msg(pb.RouteSpecSpecSchema, { ...s, family: family.to(s.family), origin: origin.to(s.origin) }),
  routeStatus: (s: RouteStatusSpec) =>
    msg(pb.RouteStatusSpecSchema, { ...s, family: family.to(s.family) }),
  hostnameSpec: (s: HostnameSpecSpec) =>
    msg(pb.HostnameSpecSpecSchema, { ...s, origin: hostnameOrigin.to(s.origin) }),
  hostnameStatus: (s: HostnameStatusSpec) => msg(pb.HostnameStatusSpecSchema, s),
  resolverSpec: (s: ResolverSpecSpec) => msg(pb.ResolverSpecSpecSchema, s),
  resolverStatus: (s: ResolverStatusSpec) => msg(pb.ResolverStatusSpecSchema, s),
  dhcpLease: (s: DhcpLeaseSpec) =>
    msg(pb.DhcpLeaseSpecSchema, { ...s, state: dhcpState.to(s.state) }),
  dhcp6Lease: (s: Dhcp6LeaseSpec) => msg(pb.Dhcp6LeaseSpecSchema, s),
  wireguardStatus: (s: WireguardStatusSpec) =>
    msg(pb.WireguardStatusSpecSchema, {
      ...s,
      peers: s.peers.map((p) =>
        msg(pb.WireguardPeerStatusSchema, {
          ...p,
          allowedIps: [...p.allowedIps],
          rxBytes: BigInt(p.rxBytes),
          txBytes: BigInt(p.txBytes),
        })
      ),
    }),
  firewallStatus: (s: FirewallStatusSpec) =>
    msg(pb.FirewallStatusSpecSchema, {
      ...s,
      defaultAction: firewallAction.to(s.defaultAction),
      rules: s.rules.map((r) =>
        msg(pb.FirewallRuleStatusSchema, { ...r, protocol: firewallProtocol.to(r.protocol) })
      ),
    }),
};

/** Proto → spec, per network type. @throws ResourceMappingError for an unknown enum value. */
export const networkFromProto = {
  linkSpec: (m: pb.LinkSpecSpec): LinkSpecSpec => ({
    ...plain<LinkSpecSpec>(m),
    origin: linkOrigin.from(m.origin),
    ...(m.create ? { create: plain<NonNullable<LinkSpecSpec["create"]>>(m.create) } : {}),
  }),
  linkStatus: (m: pb.LinkStatusSpec): LinkStatusSpec => ({
    ...plain<LinkStatusSpec>(m),
    ...(m.lacp ? { lacp: plain<NonNullable<LinkStatusSpec["lacp"]>>(m.lacp) } : {}),
  }),
  addressSpec: (m: pb.AddressSpecSpec): AddressSpecSpec => ({
    ...plain<AddressSpecSpec>(m),
    family: family.from(m.family),
    origin: origin.from(m.origin),
  }),
  addressStatus: (m: pb.AddressStatusSpec): AddressStatusSpec => ({
    ...plain<AddressStatusSpec>(m),
    family: family.from(m.family),
  }),
  routeSpec: (m: pb.RouteSpecSpec): RouteSpecSpec => ({
    ...plain<RouteSpecSpec>(m),
    family: family.from(m.family),
    origin: origin.from(m.origin),
  }),
  routeStatus: (m: pb.RouteStatusSpec): RouteStatusSpec => ({
    ...plain<RouteStatusSpec>(m),
    family: family.from(m.family),
  }),
  hostnameSpec: (m: pb.HostnameSpecSpec): HostnameSpecSpec => ({
    ...plain<HostnameSpecSpec>(m),
    origin: hostnameOrigin.from(m.origin),
  }),
  hostnameStatus: (m: pb.HostnameStatusSpec): HostnameStatusSpec => plain(m),
  resolverSpec: (m: pb.ResolverSpecSpec): ResolverSpecSpec => plain(m),
  resolverStatus: (m: pb.ResolverStatusSpec): ResolverStatusSpec => plain(m),
  dhcpLease: (m: pb.DhcpLeaseSpec): DhcpLeaseSpec => ({
    ...plain<DhcpLeaseSpec>(m),
    state: dhcpState.from(m.state),
  }),
  dhcp6Lease: (m: pb.Dhcp6LeaseSpec): Dhcp6LeaseSpec => {
    const s = plain<Dhcp6LeaseSpec>(m);
    if (!DHCP6_STATES.includes(s.state)) {
      throw new ResourceMappingError("state", `unknown DHCPv6 state ${JSON.stringify(s.state)}`);
    }
    return s;
  },
  wireguardStatus: (m: pb.WireguardStatusSpec): WireguardStatusSpec => ({
    name: m.name,
    publicKey: m.publicKey,
    listenPort: m.listenPort,
    configured: m.configured,
    peers: m.peers.map((p) => ({
      publicKey: p.publicKey,
      ...(p.endpoint === undefined ? {} : { endpoint: p.endpoint }),
      allowedIps: [...p.allowedIps],
      ...(p.lastHandshake === undefined ? {} : { lastHandshake: p.lastHandshake }),
      rxBytes: Number(p.rxBytes),
      txBytes: Number(p.txBytes),
      ...(p.persistentKeepalive === undefined
        ? {}
        : { persistentKeepalive: p.persistentKeepalive }),
    })),
    error: m.error,
    driftReapplies: m.driftReapplies,
  }),
  firewallStatus: (m: pb.FirewallStatusSpec): FirewallStatusSpec => ({
    enabled: m.enabled,
    defaultAction: firewallAction.from(m.defaultAction),
    rules: m.rules.map((r) => ({
      name: r.name,
      protocol: firewallProtocol.from(r.protocol),
      ports: [...r.ports],
      sources: [...r.sources],
      except: [...r.except],
    })),
    adminSubnets: [...m.adminSubnets],
    apiPort: m.apiPort,
    appliedHash: m.appliedHash,
    inForce: m.inForce,
    driftReapplies: m.driftReapplies,
    error: m.error,
  }),
};
