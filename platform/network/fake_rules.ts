/**
 * Pure kernel rules the fake network backend follows, each checked against
 * real rtnetlink behaviour by the conformance suite: route defaults, route
 * matching on delete, IPv6 scope, EUI-64 link-local addresses, operstate.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import type { AddressSpec, Family, OperState, RouteInfo, RouteSpec } from "./backend.ts";
import { PROTO, RTN, SCOPE, TABLE } from "./backend.ts";
import { canonicalIp, type Ip, parseIp } from "./ip.ts";

/** A locally administered MAC derived from a link index (`02:00:00:00:00:07`). */
export function fakeMac(index: number): string {
  const hex = (n: number) => n.toString(16).padStart(2, "0");
  return `02:00:00:00:${hex((index >> 8) & 0xff)}:${hex(index & 0xff)}`;
}

/** Throw the SysError the kernel would answer. */
export function fail(op: string, code: string, detail: string): never {
  throw new SysError(op, errnoValue(code), detail);
}

/** The address of an address spec, refused as the kernel would (EINVAL). */
export function specIp(op: string, s: string, spec: AddressSpec): Ip {
  const ip = parseIp(s);
  if (!ip) fail(op, "EINVAL", `bad IP address ${JSON.stringify(s)}`);
  if (spec.prefixLen < 0 || spec.prefixLen > (ip.family === "inet" ? 32 : 128)) {
    fail(op, "EINVAL", `${s}/${spec.prefixLen} on ${spec.link}`);
  }
  return ip;
}

/** Refuse a route spec the kernel refuses before looking at routes. */
export function checkRouteSpec(op: string, spec: RouteSpec): void {
  if (spec.family !== "inet" && spec.family !== "inet6") fail(op, "EAFNOSUPPORT", spec.family);
  for (const ip of [spec.dst, spec.gateway, spec.prefsrc]) {
    if (ip !== undefined && parseIp(ip)?.family !== spec.family) fail(op, "EINVAL", ip);
  }
  if ((spec.dstLen ?? 0) > (spec.family === "inet" ? 32 : 128)) fail(op, "EINVAL", "dstLen");
}

/** The route a spec adds, before the nexthop checks (oif filled in by caller). */
export function routeFromSpec(spec: RouteSpec, oif: number | undefined): RouteInfo {
  const v6 = spec.family === "inet6";
  const r: RouteInfo = {
    family: spec.family,
    dstLen: spec.dstLen ?? 0,
    table: spec.table ?? TABLE.MAIN,
    protocol: spec.protocol ?? PROTO.STATIC,
    scope: v6 ? SCOPE.UNIVERSE : spec.scope ??
      (spec.gateway === undefined && oif !== undefined ? SCOPE.LINK : SCOPE.UNIVERSE),
    type: spec.type ?? RTN.UNICAST,
  };
  if (spec.dst !== undefined) r.dst = canonicalIp(spec.dst);
  if (spec.gateway !== undefined) r.gateway = canonicalIp(spec.gateway);
  if (oif !== undefined) r.oif = oif;
  const metric = spec.metric ?? (v6 ? 1024 : 0);
  if (metric !== 0 || v6) r.metric = metric;
  if (spec.prefsrc !== undefined) r.prefsrc = canonicalIp(spec.prefsrc);
  return r;
}

/** Same key for EEXIST: family, table, destination and metric. */
export function sameRouteKey(a: RouteInfo, b: RouteInfo): boolean {
  return a.family === b.family && a.table === b.table && a.dst === b.dst &&
    a.dstLen === b.dstLen && (a.metric ?? 0) === (b.metric ?? 0);
}

/** Does `r` match a delete request? Absent fields (and scope NOWHERE) match any. */
export function routeMatchesDelete(r: RouteInfo, spec: RouteSpec, oif?: number): boolean {
  if (r.family !== spec.family || r.table !== (spec.table ?? TABLE.MAIN)) return false;
  if (r.dstLen !== (spec.dstLen ?? 0)) return false;
  if (r.dst !== (spec.dst === undefined ? undefined : canonicalIp(spec.dst))) return false;
  if (spec.metric && (r.metric ?? 0) !== spec.metric) return false;
  if (spec.gateway !== undefined && r.gateway !== canonicalIp(spec.gateway)) return false;
  if (oif !== undefined && r.oif !== oif) return false;
  if (spec.protocol && r.protocol !== spec.protocol) return false;
  if (spec.scope !== undefined && spec.scope !== SCOPE.NOWHERE && r.scope !== spec.scope) {
    return false;
  }
  if (spec.type && r.type !== spec.type) return false;
  return true;
}

/** The scope the kernel assigns an IPv6 address. */
export function ipv6Scope(address: string): number {
  const b = parseIp(address)?.bytes;
  if (!b) return SCOPE.UNIVERSE;
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return SCOPE.LINK;
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return SCOPE.HOST;
  return SCOPE.UNIVERSE;
}

/** The EUI-64 link-local address the kernel derives from a MAC. */
export function linkLocalFromMac(mac: string): string {
  const m = mac.split(":").map((x) => parseInt(x, 16));
  const b = new Uint8Array(16);
  b[0] = 0xfe;
  b[1] = 0x80;
  b.set([m[0] ^ 0x02, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]], 8);
  const hex: string[] = [];
  for (let i = 0; i < 16; i += 2) hex.push(((b[i] << 8) | b[i + 1]).toString(16));
  return canonicalIp(hex.join(":"))!;
}

/** Operstate of a veth end (or any link with a peer), as the kernel reports it. */
export function vethOperstate(up: boolean, peerUp: boolean | undefined): OperState {
  if (!up) return "down";
  if (peerUp === false) return "lowerlayerdown";
  return "up";
}

/** Family of an address string, or undefined when it is not one. */
export function familyOf(address: string): Family | undefined {
  return parseIp(address)?.family;
}
