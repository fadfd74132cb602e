/**
 * Strict IPv4/IPv6 address and CIDR parsing (ip/mod.ts: the machine config, the API, the network
 * backends and the certificates all read addresses through it).
 *
 * Strict means: IPv4 is exactly four decimal octets without leading zeros
 * (`010.0.0.1` is rejected because some tools read it as octal); IPv6 follows
 * RFC 4291 text forms (at most one `::`, groups of 1..4 hex digits, an
 * optional trailing dotted IPv4) without zone ids; prefixes are plain decimal
 * without leading zeros and within the family's width.
 *
 * @module
 */

/** A parsed IP address: its family and network-order bytes (4 or 16). */
export interface IpAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** A parsed CIDR: an address plus a prefix length. */
export interface Cidr extends IpAddress {
  prefix: number;
}

const DEC_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const PREFIX = /^(0|[1-9][0-9]{0,2})$/;

/** Parses a dotted-quad IPv4 address, or returns `undefined`. */
export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!DEC_OCTET.test(parts[i])) return undefined;
    const n = Number(parts[i]);
    if (n > 255) return undefined;
    bytes[i] = n;
  }
  return { family: 4, bytes };
}

/** Parses an IPv6 address in any RFC 4291 text form, or returns `undefined`. */
export function parseIpv6(text: string): IpAddress | undefined {
  if (text.length === 0 || text.includes("%")) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] === "" ? [] : halves[0].split(":");
  const tail = halves.length === 2 && halves[1] !== "" ? halves[1].split(":") : [];
  const groups: number[] = [];
  const all = [...head, ...tail];
  // A dotted IPv4 may only end the address.
  let v4: IpAddress | undefined;
  const last = all.at(-1);
  if (last !== undefined && last.includes(".")) {
    v4 = parseIpv4(last);
    if (!v4) return undefined;
    if (tail.length > 0) tail.pop();
    else if (halves.length === 2) return undefined; // "1.2.3.4::"
    else head.pop();
  }
  const convert = (list: string[]): number[] | undefined => {
    const out: number[] = [];
    for (const g of list) {
      if (!HEX_GROUP.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const h = convert(head);
  const t = convert(tail);
  if (!h || !t) return undefined;
  const width = v4 ? 6 : 8;
  const present = h.length + t.length;
  if (halves.length === 2) {
    if (present > width - 1) return undefined; // "::" stands for at least one group
    groups.push(...h, ...new Array(width - present).fill(0), ...t);
  } else {
    if (present !== width) return undefined;
    groups.push(...h);
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  if (v4) bytes.set(v4.bytes, 12);
  return { family: 6, bytes };
}

/** Parses an IPv4 or IPv6 address, or returns `undefined`. */
export function parseIp(text: string): IpAddress | undefined {
  return text.includes(":") ? parseIpv6(text) : parseIpv4(text);
}

/** Parses `address/prefix` (either family), or returns `undefined`. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0 || slash !== text.lastIndexOf("/")) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !PREFIX.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (ip.family === 4 ? 32 : 128)) return undefined;
  return { ...ip, prefix };
}

/** True when every bit after the prefix is zero (a network, not a host, address). */
export function hasZeroHostBits(cidr: Cidr): boolean {
  return networkOf(cidr).bytes.every((b, i) => b === cidr.bytes[i]);
}

/** The network address of a CIDR: the address with its host bits cleared. */
export function networkOf(cidr: Cidr): Cidr {
  const bytes = new Uint8Array(cidr.bytes);
  for (let bit = cidr.prefix; bit < bytes.length * 8; bit++) {
    bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  }
  return { family: cidr.family, bytes, prefix: cidr.prefix };
}

/** Canonical text of an address (RFC 5952 for IPv6: lowercase, longest zero run as `::`). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i] << 8) | ip.bytes[i + 1]);
  let bestStart = -1;
  let bestLen = 1; // RFC 5952: never compress a single zero group
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  const left = hex.slice(0, bestStart).join(":");
  const right = hex.slice(bestStart + bestLen).join(":");
  return `${left}::${right}`;
}

/** Canonical `address/prefix` text of a CIDR. */
export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr)}/${cidr.prefix}`;
}

/**
 * Parses `host:port` or `[v6]:port` where host is an IP address; returns
 * `undefined` when malformed. Port must be 1..65535 (or 0 when `allowZero`).
 */
export function parseHostPort(
  text: string,
  allowZero = false,
): { ip: IpAddress; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:\[\]]+)):(0|[1-9][0-9]{0,4})$/.exec(text);
  if (!m) return undefined;
  const ip = m[1] !== undefined ? parseIpv6(m[1]) : parseIpv4(m[2]);
  const port = Number(m[3]);
  if (!ip || port > 65535 || (port === 0 && !allowZero)) return undefined;
  return { ip, port };
}
