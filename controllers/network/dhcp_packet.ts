/**
 * DHCPv4 messages (RFC 2131, options of RFC 2132) as pure encode/decode
 * functions, so the client's wire format is tested byte for byte without a
 * socket. Only the options the client uses are typed; others are kept raw.
 * @module
 */

/** Option codes the client reads or writes. */
export const OPT = {
  PAD: 0,
  SUBNET_MASK: 1,
  ROUTER: 3,
  DNS_SERVERS: 6,
  HOSTNAME: 12,
  DOMAIN_NAME: 15,
  REQUESTED_IP: 50,
  LEASE_TIME: 51,
  MESSAGE_TYPE: 53,
  SERVER_ID: 54,
  PARAMETER_LIST: 55,
  MESSAGE: 56,
  MAX_MESSAGE_SIZE: 57,
  RENEWAL_TIME: 58,
  REBINDING_TIME: 59,
  CLIENT_ID: 61,
  END: 255,
} as const;

/** Message types (option 53). */
export const MESSAGE_TYPES = [
  "discover",
  "offer",
  "request",
  "decline",
  "ack",
  "nak",
  "release",
  "inform",
] as const;
/** A DHCP message type. */
export type DhcpMessageType = typeof MESSAGE_TYPES[number];

/** The options this client understands; absent when not in the packet. */
export interface DhcpOptions {
  subnetMask?: string;
  routers?: string[];
  dnsServers?: string[];
  hostname?: string;
  domainName?: string;
  requestedIp?: string;
  /** Seconds; 0xffffffff means infinite. */
  leaseTime?: number;
  serverId?: string;
  parameterList?: number[];
  message?: string;
  maxMessageSize?: number;
  renewalTime?: number;
  rebindingTime?: number;
  clientId?: Uint8Array;
  /** Every other option, by code, as raw bytes. */
  other?: Map<number, Uint8Array>;
}

/** One BOOTP/DHCP message. Addresses are dotted quads (`0.0.0.0` when unset). */
export interface DhcpMessage {
  /** 1 BOOTREQUEST (client), 2 BOOTREPLY (server). */
  op: 1 | 2;
  type: DhcpMessageType;
  xid: number;
  secs: number;
  /** The broadcast flag: ask the server to broadcast its reply. */
  broadcast: boolean;
  ciaddr: string;
  yiaddr: string;
  siaddr: string;
  giaddr: string;
  /** Client hardware (MAC) address, `aa:bb:cc:dd:ee:ff`. */
  chaddr: string;
  options: DhcpOptions;
}

/** A received packet that is not a well-formed DHCP message. */
export class DhcpDecodeError extends Error {
  override name = "DhcpDecodeError";
  constructor(readonly offset: number, readonly reason: string) {
    super(`Cannot decode DHCP message at byte ${offset}: ${reason}`);
  }
}

const MAGIC = [99, 130, 83, 99];
const HEADER = 236;
/** BOOTP's minimum message size; some relays drop shorter packets. */
const MIN_SIZE = 300;

/** Encode a message; the result is padded to 300 bytes. @throws TypeError on a bad address. */
export function encodeDhcp(m: DhcpMessage): Uint8Array {
  const opts = encodeOptions(m);
  const out = new Uint8Array(Math.max(MIN_SIZE, HEADER + 4 + opts.length));
  const view = new DataView(out.buffer);
  out[0] = m.op;
  out[1] = 1; // Ethernet
  out[2] = 6;
  out[3] = 0;
  view.setUint32(4, m.xid >>> 0);
  view.setUint16(8, m.secs);
  view.setUint16(10, m.broadcast ? 0x8000 : 0);
  out.set(ipv4Bytes(m.ciaddr), 12);
  out.set(ipv4Bytes(m.yiaddr), 16);
  out.set(ipv4Bytes(m.siaddr), 20);
  out.set(ipv4Bytes(m.giaddr), 24);
  out.set(macBytes(m.chaddr), 28);
  out.set(MAGIC, HEADER);
  out.set(opts, HEADER + 4);
  return out;
}

function encodeOptions(m: DhcpMessage): Uint8Array {
  const o = m.options;
  const parts: number[] = [];
  // Values over 255 bytes are split into several options (RFC 3396).
  const put = (code: number, data: ArrayLike<number>) => {
    const bytes = Array.from(data);
    let i = 0;
    do {
      const chunk = bytes.slice(i, i + 255);
      parts.push(code, chunk.length, ...chunk);
      i += 255;
    } while (i < bytes.length);
  };
  const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  const ips = (xs: string[]) => xs.flatMap((x) => [...ipv4Bytes(x)]);
  const text = (s: string) => new TextEncoder().encode(s);
  put(OPT.MESSAGE_TYPE, [MESSAGE_TYPES.indexOf(m.type) + 1]);
  if (o.clientId) put(OPT.CLIENT_ID, o.clientId);
  if (o.requestedIp) put(OPT.REQUESTED_IP, ipv4Bytes(o.requestedIp));
  if (o.serverId) put(OPT.SERVER_ID, ipv4Bytes(o.serverId));
  if (o.maxMessageSize !== undefined) {
    put(OPT.MAX_MESSAGE_SIZE, [o.maxMessageSize >> 8, o.maxMessageSize & 0xff]);
  }
  if (o.parameterList) put(OPT.PARAMETER_LIST, o.parameterList);
  if (o.subnetMask) put(OPT.SUBNET_MASK, ipv4Bytes(o.subnetMask));
  if (o.routers) put(OPT.ROUTER, ips(o.routers));
  if (o.dnsServers) put(OPT.DNS_SERVERS, ips(o.dnsServers));
  if (o.hostname !== undefined) put(OPT.HOSTNAME, text(o.hostname));
  if (o.domainName !== undefined) put(OPT.DOMAIN_NAME, text(o.domainName));
  if (o.leaseTime !== undefined) put(OPT.LEASE_TIME, u32(o.leaseTime));
  if (o.renewalTime !== undefined) put(OPT.RENEWAL_TIME, u32(o.renewalTime));
  if (o.rebindingTime !== undefined) put(OPT.REBINDING_TIME, u32(o.rebindingTime));
  if (o.message !== undefined) put(OPT.MESSAGE, text(o.message));
  for (const [code, data] of o.other ?? []) put(code, data);
  parts.push(OPT.END);
  return new Uint8Array(parts);
}

/** Decode a received packet. @throws DhcpDecodeError when malformed or not DHCP. */
export function decodeDhcp(b: Uint8Array): DhcpMessage {
  if (b.length < HEADER + 4) throw new DhcpDecodeError(b.length, "shorter than a BOOTP header");
  if (b[0] !== 1 && b[0] !== 2) throw new DhcpDecodeError(0, `bad op ${b[0]}`);
  if (b[1] !== 1 || b[2] !== 6) {
    throw new DhcpDecodeError(1, `hardware type ${b[1]}/${b[2]} is not Ethernet`);
  }
  if (!MAGIC.every((x, i) => b[HEADER + i] === x)) {
    throw new DhcpDecodeError(HEADER, "no DHCP magic cookie");
  }
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const raw = readOptions(b, HEADER + 4);
  const typeByte = raw.get(OPT.MESSAGE_TYPE);
  if (!typeByte || typeByte.length !== 1 || typeByte[0] < 1 || typeByte[0] > 8) {
    throw new DhcpDecodeError(HEADER + 4, "missing or bad message type (option 53)");
  }
  return {
    op: b[0] as 1 | 2,
    type: MESSAGE_TYPES[typeByte[0] - 1],
    xid: view.getUint32(4),
    secs: view.getUint16(8),
    broadcast: (view.getUint16(10) & 0x8000) !== 0,
    ciaddr: ipv4Text(b, 12),
    yiaddr: ipv4Text(b, 16),
    siaddr: ipv4Text(b, 20),
    giaddr: ipv4Text(b, 24),
    chaddr: Array.from(b.subarray(28, 34), (x) => x.toString(16).padStart(2, "0")).join(":"),
    options: typedOptions(raw),
  };
}

/** Options as code → bytes, with RFC 3396 long options concatenated. */
function readOptions(b: Uint8Array, start: number): Map<number, Uint8Array> {
  const out = new Map<number, Uint8Array>();
  let i = start;
  while (i < b.length) {
    const code = b[i];
    if (code === OPT.END) return out;
    if (code === OPT.PAD) {
      i++;
      continue;
    }
    if (i + 1 >= b.length) throw new DhcpDecodeError(i, `option ${code} has no length`);
    const len = b[i + 1];
    if (i + 2 + len > b.length) throw new DhcpDecodeError(i, `option ${code} overruns the packet`);
    const data = b.subarray(i + 2, i + 2 + len);
    const prev = out.get(code);
    out.set(code, prev ? new Uint8Array([...prev, ...data]) : data.slice());
    i += 2 + len;
  }
  return out; // tolerate a missing END, as many clients do
}

function typedOptions(raw: Map<number, Uint8Array>): DhcpOptions {
  const o: DhcpOptions = {};
  const ip = (code: number) => {
    const d = raw.get(code);
    return d && d.length === 4 ? ipv4Text(d, 0) : undefined;
  };
  const ips = (code: number) => {
    const d = raw.get(code);
    if (!d || d.length === 0 || d.length % 4 !== 0) return undefined;
    const xs: string[] = [];
    for (let i = 0; i < d.length; i += 4) xs.push(ipv4Text(d, i));
    return xs;
  };
  const u32 = (code: number) => {
    const d = raw.get(code);
    return d && d.length === 4 ? new DataView(d.buffer, d.byteOffset).getUint32(0) : undefined;
  };
  const text = (code: number) => {
    const d = raw.get(code);
    return d ? new TextDecoder().decode(d).replace(/\0+$/, "") : undefined;
  };
  const set = <K extends keyof DhcpOptions>(k: K, v: DhcpOptions[K] | undefined) => {
    if (v !== undefined) o[k] = v;
  };
  set("subnetMask", ip(OPT.SUBNET_MASK));
  set("routers", ips(OPT.ROUTER));
  set("dnsServers", ips(OPT.DNS_SERVERS));
  set("hostname", text(OPT.HOSTNAME));
  set("domainName", text(OPT.DOMAIN_NAME));
  set("requestedIp", ip(OPT.REQUESTED_IP));
  set("leaseTime", u32(OPT.LEASE_TIME));
  set("serverId", ip(OPT.SERVER_ID));
  const params = raw.get(OPT.PARAMETER_LIST);
  if (params) o.parameterList = [...params];
  set("message", text(OPT.MESSAGE));
  const mms = raw.get(OPT.MAX_MESSAGE_SIZE);
  if (mms?.length === 2) o.maxMessageSize = (mms[0] << 8) | mms[1];
  set("renewalTime", u32(OPT.RENEWAL_TIME));
  set("rebindingTime", u32(OPT.REBINDING_TIME));
  set("clientId", raw.get(OPT.CLIENT_ID));
  const known = new Set<number>(Object.values(OPT));
  const other = new Map([...raw].filter(([code]) => !known.has(code)));
  if (other.size > 0) o.other = other;
  return o;
}

/** The prefix length of a contiguous netmask; undefined when not contiguous. */
export function maskToPrefix(mask: string): number | undefined {
  const n = ipv4Bytes(mask).reduce((acc, x) => (acc << 8) | x, 0) >>> 0;
  const len = 32 - Math.log2(((~n) >>> 0) + 1);
  return Number.isInteger(len) ? len : undefined;
}

/** The classful prefix length, for offers without a subnet mask (RFC 2132 §3.3 leaves it open). */
export function classfulPrefix(address: string): number {
  const first = ipv4Bytes(address)[0];
  return first < 128 ? 8 : first < 192 ? 16 : 24;
}

function ipv4Bytes(s: string): Uint8Array {
  const parts = s.split(".");
  const out = new Uint8Array(4);
  if (parts.length !== 4) throw new TypeError(`Not an IPv4 address: "${s}"`);
  parts.forEach((p, i) => {
    const n = Number(p);
    if (!/^\d{1,3}$/.test(p) || n > 255) throw new TypeError(`Not an IPv4 address: "${s}"`);
    out[i] = n;
  });
  return out;
}

function ipv4Text(b: Uint8Array, at: number): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

function macBytes(mac: string): Uint8Array {
  const parts = mac.split(":");
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) {
    throw new TypeError(`Not a MAC address: "${mac}"`);
  }
  return new Uint8Array(parts.map((p) => parseInt(p, 16)));
}
