/**
 * Pure IP address helpers for the network backends: parse to bytes (through
 * ip/mod.ts, the one parser), canonical text (RFC 5952, as the kernel-side
 * Rust code prints it), prefix masks and containment. Used by the
 * fake backend and by anything that compares addresses.
 * @module
 */
import { formatIp as formatStrictIp, parseIp as parseStrictIp } from "../../ip/mod.ts";
import type { Family } from "./backend.ts";

/** A parsed address. */
export interface Ip {
  family: Family;
  bytes: Uint8Array;
}

/**
 * Parse an IPv4 or IPv6 address; undefined when it is neither. The one strict
 * parser is ip/mod.ts's (the machine config's too); this adds the backend's
 * family names.
 */
export function parseIp(s: string): Ip | undefined {
  const ip = parseStrictIp(s);
  return ip ? { family: ip.family === 4 ? "inet" : "inet6", bytes: ip.bytes } : undefined;
}

/**
 * Canonical text of address bytes (4 or 16 of them): ip/mod.ts's RFC 5952 form,
 * except an IPv4-mapped address, which keeps its dotted tail as Rust prints it.
 */
export function formatIp(b: Uint8Array): string {
  if (b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
    return `::ffff:${Array.from(b.slice(12)).join(".")}`;
  }
  return formatStrictIp({ family: b.length === 4 ? 4 : 6, bytes: b });
}

/** Canonical text of an address string, or undefined when invalid. */
export function canonicalIp(s: string): string | undefined {
  const ip = parseIp(s);
  return ip ? formatIp(ip.bytes) : undefined;
}

/** The network part of `b` for `prefixLen` (host bits zeroed). */
export function maskIp(b: Uint8Array, prefixLen: number): Uint8Array {
  const out = new Uint8Array(b);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefixLen - 8 * i));
    out[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return out;
}

/** True when `ip` lies in `net`/`prefixLen` (same family). */
export function prefixContains(net: Uint8Array, prefixLen: number, ip: Uint8Array): boolean {
  if (net.length !== ip.length) return false;
  const a = maskIp(net, prefixLen), b = maskIp(ip, prefixLen);
  return a.every((x, i) => x === b[i]);
}
