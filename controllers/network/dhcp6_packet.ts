/**
 * DHCPv6 client messages (RFC 8415): what a client sends for IA_NA (SOLICIT,
 * REQUEST, RENEW, REBIND, RELEASE) and what it reads back (ADVERTISE, REPLY:
 * IA_NA with its addresses and T1/T2, status codes, DNS servers of RFC 3646,
 * option 23, and the search list, option 24), as pure functions. Decoding is bounded before any work: a
 * packet over {@link DHCP6_MAX_PACKET} bytes, more than
 * {@link DHCP6_MAX_OPTIONS} options at a level, or options nested deeper
 * than the IA_NA → IAADDR → status code chain are refused with a
 * {@link Dhcp6PacketError} naming the offset, as is any option running past
 * its parent. The socket is the backend's `openDhcp6Socket`; the state
 * machine is dhcp6_client.ts.
 * @module
 */
import { formatIp, parseIp } from "../../platform/network/mod.ts";

/** Message types. */
export const DHCP6_TYPE = {
  SOLICIT: 1,
  ADVERTISE: 2,
  REQUEST: 3,
  RENEW: 5,
  REBIND: 6,
  REPLY: 7,
  RELEASE: 8,
} as const;

/** Option codes the client writes or reads. */
export const DHCP6_OPT = {
  CLIENTID: 1,
  SERVERID: 2,
  IA_NA: 3,
  IAADDR: 5,
  ORO: 6,
  PREFERENCE: 7,
  ELAPSED_TIME: 8,
  STATUS_CODE: 13,
  DNS_SERVERS: 23,
  DOMAIN_LIST: 24,
} as const;

/** Largest packet decoded; a reply to one client fits far below it. */
export const DHCP6_MAX_PACKET = 4096;
/** Most options read at one level (message, IA_NA, IAADDR). */
export const DHCP6_MAX_OPTIONS = 64;
/** Most addresses kept from one IA_NA, and DNS servers kept from option 23. */
export const DHCP6_MAX_LIST = 8;

/** A malformed or oversized packet. */
export class Dhcp6PacketError extends Error {
  override name = "Dhcp6PacketError";
  constructor(readonly reason: string, readonly offset: number) {
    super(`Cannot decode DHCPv6 packet at byte ${offset}: ${reason}`);
  }
}

/** One leased address of an IA_NA; lifetimes in seconds (0xffffffff: infinite). */
export interface Dhcp6Address {
  address: string;
  preferred: number;
  valid: number;
}

/** An identity association for non-temporary addresses. */
export interface Dhcp6IaNa {
  iaid: number;
  t1: number;
  t2: number;
  addresses: Dhcp6Address[];
  /** The IA's status code (absent: success). */
  status?: { code: number; message: string };
}

/** A message as the client sees it. */
export interface Dhcp6Message {
  type: number;
  /** 24 bits. */
  transactionId: number;
  clientId?: Uint8Array;
  serverId?: Uint8Array;
  iaNa?: Dhcp6IaNa;
  /** The message-level status code (absent: success). */
  status?: { code: number; message: string };
  preference?: number;
  dnsServers: string[];
  /** Domain search list (RFC 3646, option 24), at most {@link DHCP6_MAX_LIST}. */
  domains?: string[];
  /** Hundredths of a second since the exchange began (sent only). */
  elapsed?: number;
  /** Requested options (sent only). */
  oro?: number[];
}

/** DUID-LL (type 3) over an Ethernet MAC: stable per NIC, no clock or storage. */
export function duidLl(mac: string): Uint8Array {
  const hex = mac.split(":");
  if (hex.length !== 6 || !hex.every((h) => /^[0-9a-fA-F]{2}$/.test(h))) {
    throw new TypeError(`Cannot build a DUID from MAC "${mac}": not six hex octets`);
  }
  return Uint8Array.from([0, 3, 0, 1, ...hex.map((h) => parseInt(h, 16))]);
}

/** Encode a client message. */
export function encodeDhcp6(m: Dhcp6Message): Uint8Array {
  const out: number[] = [m.type, (m.transactionId >> 16) & 0xff, (m.transactionId >> 8) & 0xff];
  out.push(m.transactionId & 0xff);
  if (m.clientId) option(out, DHCP6_OPT.CLIENTID, [...m.clientId]);
  if (m.serverId) option(out, DHCP6_OPT.SERVERID, [...m.serverId]);
  if (m.elapsed !== undefined) {
    option(out, DHCP6_OPT.ELAPSED_TIME, u16(Math.min(m.elapsed, 0xffff)));
  }
  if (m.oro) option(out, DHCP6_OPT.ORO, m.oro.flatMap(u16));
  if (m.iaNa) {
    const body = [...u32(m.iaNa.iaid), ...u32(m.iaNa.t1), ...u32(m.iaNa.t2)];
    for (const a of m.iaNa.addresses) {
      const ip = parseIp(a.address);
      if (ip?.family !== "inet6") throw new TypeError(`Not an IPv6 address: "${a.address}"`);
      option(body, DHCP6_OPT.IAADDR, [...ip.bytes, ...u32(a.preferred), ...u32(a.valid)]);
    }
    option(out, DHCP6_OPT.IA_NA, body);
  }
  return Uint8Array.from(out);
}

/**
 * Decode a server message.
 * @throws Dhcp6PacketError when it is oversized, truncated or malformed.
 */
export function decodeDhcp6(data: Uint8Array): Dhcp6Message {
  if (data.length > DHCP6_MAX_PACKET) {
    throw new Dhcp6PacketError(`${data.length} bytes, more than ${DHCP6_MAX_PACKET}`, 0);
  }
  if (data.length < 4) throw new Dhcp6PacketError("shorter than the 4-byte header", 0);
  const m: Dhcp6Message = {
    type: data[0],
    transactionId: (data[1] << 16) | (data[2] << 8) | data[3],
    dnsServers: [],
  };
  for (const o of options(data, 4, data.length)) {
    const body = data.subarray(o.start, o.end);
    switch (o.code) {
      case DHCP6_OPT.CLIENTID:
        m.clientId = body.slice();
        break;
      case DHCP6_OPT.SERVERID:
        m.serverId = body.slice();
        break;
      case DHCP6_OPT.STATUS_CODE:
        m.status = status(data, o);
        break;
      case DHCP6_OPT.PREFERENCE:
        if (body.length !== 1) throw new Dhcp6PacketError("preference is not 1 byte", o.start);
        m.preference = body[0];
        break;
      case DHCP6_OPT.DNS_SERVERS:
        if (body.length % 16 !== 0) {
          throw new Dhcp6PacketError("DNS servers not a multiple of 16 bytes", o.start);
        }
        for (let i = 0; i < body.length && m.dnsServers.length < DHCP6_MAX_LIST; i += 16) {
          m.dnsServers.push(formatIp(body.subarray(i, i + 16)));
        }
        break;
      case DHCP6_OPT.DOMAIN_LIST:
        m.domains = domainList(body, o.start);
        break;
      case DHCP6_OPT.IA_NA:
        // The first IA_NA is the client's (it sends one); others are ignored.
        m.iaNa ??= iaNa(data, o);
        break;
    }
  }
  return m;
}

interface Opt {
  code: number;
  start: number;
  end: number;
}

/** The options in data[from, to), bounded in count; each must fit inside. */
function options(data: Uint8Array, from: number, to: number): Opt[] {
  const out: Opt[] = [];
  let at = from;
  while (at < to) {
    if (out.length === DHCP6_MAX_OPTIONS) {
      throw new Dhcp6PacketError(`more than ${DHCP6_MAX_OPTIONS} options`, at);
    }
    if (to - at < 4) throw new Dhcp6PacketError("truncated option header", at);
    const code = (data[at] << 8) | data[at + 1];
    const len = (data[at + 2] << 8) | data[at + 3];
    if (at + 4 + len > to) {
      throw new Dhcp6PacketError(`option ${code} of ${len} bytes runs past its end`, at);
    }
    out.push({ code, start: at + 4, end: at + 4 + len });
    at += 4 + len;
  }
  return out;
}

function iaNa(data: Uint8Array, o: Opt): Dhcp6IaNa {
  if (o.end - o.start < 12) throw new Dhcp6PacketError("IA_NA shorter than 12 bytes", o.start);
  const ia: Dhcp6IaNa = {
    iaid: readU32(data, o.start),
    t1: readU32(data, o.start + 4),
    t2: readU32(data, o.start + 8),
    addresses: [],
  };
  for (const sub of options(data, o.start + 12, o.end)) {
    if (sub.code === DHCP6_OPT.STATUS_CODE) ia.status = status(data, sub);
    if (sub.code !== DHCP6_OPT.IAADDR || ia.addresses.length >= DHCP6_MAX_LIST) continue;
    if (sub.end - sub.start < 24) {
      throw new Dhcp6PacketError("IAADDR shorter than 24 bytes", sub.start);
    }
    const inner = options(data, sub.start + 24, sub.end);
    const st = inner.find((x) => x.code === DHCP6_OPT.STATUS_CODE);
    if (st && status(data, st).code !== 0) continue; // refused address
    ia.addresses.push({
      address: formatIp(data.subarray(sub.start, sub.start + 16)),
      preferred: readU32(data, sub.start + 16),
      valid: readU32(data, sub.start + 20),
    });
  }
  return ia;
}

function status(data: Uint8Array, o: Opt): { code: number; message: string } {
  if (o.end - o.start < 2) throw new Dhcp6PacketError("status code shorter than 2 bytes", o.start);
  const message = new TextDecoder("utf-8", { fatal: false }).decode(
    data.subarray(o.start + 2, o.end),
  );
  return { code: (data[o.start] << 8) | data[o.start + 1], message };
}

/** RFC 1035 §3.1 names, uncompressed (RFC 8415 §10), each at most 255 bytes. */
function domainList(body: Uint8Array, at: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < body.length && out.length < DHCP6_MAX_LIST) {
    const labels: string[] = [];
    for (let len = body[i]; len !== 0; len = body[i]) {
      if (len > 63 || i + 1 + len >= body.length) {
        throw new Dhcp6PacketError("bad label in domain list", at + i);
      }
      labels.push(new TextDecoder().decode(body.subarray(i + 1, i + 1 + len)));
      i += 1 + len;
    }
    i++;
    const name = labels.join(".");
    if (name.length > 253) throw new Dhcp6PacketError("domain name over 253 bytes", at + i);
    if (name) out.push(name);
  }
  return out;
}

function option(out: number[], code: number, body: number[]): void {
  out.push(...u16(code), ...u16(body.length), ...body);
}

function u16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}

function u32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function readU32(d: Uint8Array, at: number): number {
  return ((d[at] << 24) >>> 0) + (d[at + 1] << 16) + (d[at + 2] << 8) + d[at + 3];
}
