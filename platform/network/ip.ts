/**
 * Pure IP address helpers: parse to bytes, canonical text (RFC 5952, as the
 * kernel-side Rust code prints it), prefix masks and containment. Used by the
 * fake backend and by anything that compares addresses.
 * @module
 */
import type { Family } from "./backend.ts";

/** A parsed address. */
export interface Ip {
  family: Family;
  bytes: Uint8Array;
}

function parseV4(s: string): Uint8Array | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^(0|[1-9]\d{0,2})$/.test(parts[i])) return undefined;
    const n = Number(parts[i]);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseV6(s: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === "") return [];
    const out: number[] = [];
    const parts = h.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseV4(p);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Parse an IPv4 or IPv6 address; undefined when it is neither. */
export function parseIp(s: string): Ip | undefined {
  const v4 = parseV4(s);
  if (v4) return { family: "inet", bytes: v4 };
  const v6 = parseV6(s);
  return v6 ? { family: "inet6", bytes: v6 } : undefined;
}

/** Canonical text of address bytes (4 or 16 of them). */
export function formatIp(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join(".");
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) {
    return `::ffff:${Array.from(b.slice(12)).join(".")}`; // IPv4-mapped, as Rust prints it
  }
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((b[i] << 8) | b[i + 1]);
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  if (bestLen < 2) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
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
