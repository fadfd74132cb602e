/**
 * The 48-byte NTP packet header (RFC 5905 §7.3, as SNTP uses it per RFC 4330),
 * encoded and decoded as pure functions, and the conversions between NTP's
 * 64-bit timestamps and Unix nanoseconds. Timestamps stay raw 64-bit values
 * (`bigint`) in the packet so the client's origin check compares them
 * exactly, bit for bit.
 * @module
 */

/** Packet length without extension fields or MAC. */
export const NTP_PACKET_LENGTH = 48;

/** Seconds from 1900-01-01 (NTP era 0) to 1970-01-01 (Unix epoch). */
export const NTP_UNIX_OFFSET_SECONDS = 2_208_988_800n;

/** Association modes this client and the test responder use. */
export const NTP_MODE = { client: 3, server: 4, broadcast: 5 } as const;

/** Leap indicator 3: the server's clock is not synchronised. */
export const LEAP_ALARM = 3;

/** The header fields, decoded. */
export interface NtpPacket {
  /** Leap indicator, 0..3 (3 = alarm: clock unsynchronised). */
  leap: number;
  /** Version, 1..7 (this client sends 4). */
  version: number;
  /** Mode, 0..7 (client 3, server 4). */
  mode: number;
  /** 0 = kiss-of-death / unspecified, 1 = primary, 2..15 secondary, 16 unsynchronised. */
  stratum: number;
  /** log2 of the poll interval in seconds (signed). */
  poll: number;
  /** log2 of the clock precision in seconds (signed). */
  precision: number;
  /** Round-trip delay to the reference clock, seconds (16.16 fixed point). */
  rootDelay: number;
  /** Dispersion to the reference clock, seconds (16.16 fixed point). */
  rootDispersion: number;
  /** Reference id: ASCII code for stratum 0/1 (a kiss code, `GPS`...), an IPv4 address above. */
  referenceId: number;
  /** Raw 64-bit NTP timestamps (32.32 seconds since 1900, era-relative); 0n means unset. */
  referenceTimestamp: bigint;
  originTimestamp: bigint;
  receiveTimestamp: bigint;
  transmitTimestamp: bigint;
}

/** A packet that cannot be decoded, with the reason and the length seen. */
export class NtpDecodeError extends Error {
  override name = "NtpDecodeError";
  constructor(readonly reason: string, readonly length: number) {
    super(`Cannot decode NTP packet (${length} bytes): ${reason}`);
  }
}

/**
 * Encode the 48-byte header.
 * @throws RangeError when a field does not fit its bits
 */
export function encodeNtp(p: NtpPacket): Uint8Array {
  const bytes = new Uint8Array(NTP_PACKET_LENGTH);
  const view = new DataView(bytes.buffer);
  fits("leap", p.leap, 0, 3);
  fits("version", p.version, 0, 7);
  fits("mode", p.mode, 0, 7);
  fits("stratum", p.stratum, 0, 255);
  fits("poll", p.poll, -128, 127);
  fits("precision", p.precision, -128, 127);
  fits("referenceId", p.referenceId, 0, 0xffff_ffff);
  view.setUint8(0, (p.leap << 6) | (p.version << 3) | p.mode);
  view.setUint8(1, p.stratum);
  view.setInt8(2, p.poll);
  view.setInt8(3, p.precision);
  view.setInt32(4, fixed16("rootDelay", p.rootDelay, true));
  view.setUint32(8, fixed16("rootDispersion", p.rootDispersion, false));
  view.setUint32(12, p.referenceId);
  const stamps = [
    p.referenceTimestamp,
    p.originTimestamp,
    p.receiveTimestamp,
    p.transmitTimestamp,
  ];
  stamps.forEach((ts, i) => {
    if (ts < 0n || ts > 0xffff_ffff_ffff_ffffn) throw new RangeError(`timestamp ${ts} overflows`);
    view.setBigUint64(16 + 8 * i, ts);
  });
  return bytes;
}

/**
 * Decode a packet; bytes after the 48-byte header (extensions, MAC) are ignored.
 * @throws NtpDecodeError for a short packet
 */
export function decodeNtp(bytes: Uint8Array): NtpPacket {
  if (bytes.length < NTP_PACKET_LENGTH) {
    throw new NtpDecodeError(`shorter than ${NTP_PACKET_LENGTH} bytes`, bytes.length);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const b0 = view.getUint8(0);
  return {
    leap: b0 >> 6,
    version: (b0 >> 3) & 7,
    mode: b0 & 7,
    stratum: view.getUint8(1),
    poll: view.getInt8(2),
    precision: view.getInt8(3),
    rootDelay: view.getInt32(4) / 65536,
    rootDispersion: view.getUint32(8) / 65536,
    referenceId: view.getUint32(12),
    referenceTimestamp: view.getBigUint64(16),
    originTimestamp: view.getBigUint64(24),
    receiveTimestamp: view.getBigUint64(32),
    transmitTimestamp: view.getBigUint64(40),
  };
}

/** A client-mode request (version 4) whose transmit timestamp is `transmitTimestamp`. */
export function clientRequest(transmitTimestamp: bigint, poll = 0): NtpPacket {
  return {
    leap: 0,
    version: 4,
    mode: NTP_MODE.client,
    stratum: 0,
    poll,
    precision: 0,
    rootDelay: 0,
    rootDispersion: 0,
    referenceId: 0,
    referenceTimestamp: 0n,
    originTimestamp: 0n,
    receiveTimestamp: 0n,
    transmitTimestamp,
  };
}

/** The four ASCII characters of a reference id (a kiss code such as `RATE`), NULs trimmed. */
export function referenceIdText(referenceId: number): string {
  const chars = [24, 16, 8, 0].map((shift) => (referenceId >>> shift) & 0xff);
  return String.fromCharCode(...chars.filter((c) => c !== 0));
}

/** Pack up to four ASCII characters into a reference id (`"LOCL"`, `"DENY"`). */
export function referenceIdFromText(text: string): number {
  if (!/^[\x20-\x7e]{0,4}$/.test(text)) throw new RangeError(`bad reference id "${text}"`);
  let id = 0;
  for (let i = 0; i < 4; i++) id = id * 256 + (i < text.length ? text.charCodeAt(i) : 0);
  return id;
}

/**
 * Unix nanoseconds → raw NTP timestamp. Times from 2036-02-07 on wrap into
 * era 1 (seconds field restarts at 0), as RFC 4330 §3 prescribes.
 * @throws RangeError before 1968-01-20 (not representable in the era-0/1 scheme)
 */
export function unixNsToNtp(unixNs: bigint): bigint {
  const ns = unixNs + NTP_UNIX_OFFSET_SECONDS * 1_000_000_000n;
  if (ns < 0x8000_0000n * 1_000_000_000n) {
    throw new RangeError(`time ${unixNs} ns is before the NTP era 0/1 window`);
  }
  const seconds = ns / 1_000_000_000n;
  const subNs = ns % 1_000_000_000n;
  // Round the fraction to the nearest 2^-32 s so encode∘decode is stable.
  const fraction = (subNs * 0x1_0000_0000n + 500_000_000n) / 1_000_000_000n;
  return (((seconds + fraction / 0x1_0000_0000n) & 0xffff_ffffn) << 32n) |
    (fraction & 0xffff_ffffn);
}

/**
 * Raw NTP timestamp → Unix nanoseconds. A seconds field with its top bit clear
 * is era 1 (2036–2104), set is era 0 (1968–2036): RFC 4330 §3.
 */
export function ntpToUnixNs(ts: bigint): bigint {
  const seconds = ts >> 32n;
  const fraction = ts & 0xffff_ffffn;
  const era = (seconds & 0x8000_0000n) === 0n ? 0x1_0000_0000n : 0n;
  const subNs = (fraction * 1_000_000_000n + 0x8000_0000n) >> 32n;
  return (seconds + era - NTP_UNIX_OFFSET_SECONDS) * 1_000_000_000n + subNs;
}

function fits(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} ${value} is outside ${min}..${max}`);
  }
}

function fixed16(name: string, seconds: number, signed: boolean): number {
  const raw = Math.round(seconds * 65536);
  const [min, max] = signed ? [-0x8000_0000, 0x7fff_ffff] : [0, 0xffff_ffff];
  if (!Number.isFinite(raw) || raw < min || raw > max) {
    throw new RangeError(`${name} ${seconds} s does not fit 16.16 fixed point`);
  }
  return raw;
}
