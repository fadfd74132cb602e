/**
 * One SNTP query (RFC 4330 client mode): resolve the server, send a request
 * stamped with the local clock, check the reply (origin timestamp, mode,
 * stratum, leap, kiss-of-death) and compute offset and delay. t4 is t1 plus
 * the round trip measured on a monotonic counter, so a clock step or a
 * coarse clock during the exchange cannot distort the delay.
 * @module
 */
import { type HostResolver, isIpLiteral, type NtpTransport } from "./ntp_transport.ts";
import {
  clientRequest,
  decodeNtp,
  encodeNtp,
  LEAP_ALARM,
  NTP_MODE,
  type NtpPacket,
  ntpToUnixNs,
  referenceIdText,
  unixNsToNtp,
} from "./sntp_packet.ts";
import { nsToMs, offsetAndDelay } from "./sntp_math.ts";
import {
  SntpError,
  SntpKissOfDeathError,
  SntpReplyError,
  SntpResolveError,
  SntpTimeoutError,
  SntpTransportError,
} from "./sntp_error.ts";

/** A usable measurement. */
export interface SntpSample {
  /** As configured. */
  server: string;
  /** The IP that answered. */
  address: string;
  stratum: number;
  /** Reference id as text for stratum 1 (`GPS`, `LOCL`), dotted IPv4 otherwise. */
  reference: string;
  offsetNs: bigint;
  delayNs: bigint;
  /** The same, in (fractional) milliseconds, for status and logs. */
  offsetMs: number;
  delayMs: number;
}

/** What a query needs. */
export interface SntpClientDeps {
  transport: NtpTransport;
  resolve: HostResolver;
  /** The local clock being measured (and later corrected), as Unix nanoseconds. */
  readClock: () => bigint;
  /** Monotonic milliseconds for the round trip. @default performance.now */
  monotonic?: () => number;
}

/** Tuning of one query. */
export interface SntpQueryOptions {
  /** @default 123 */
  port?: number;
  /** Per address. @default 2000 */
  timeoutMs?: number;
  /** Addresses of a name tried before giving up on it. @default 3 */
  maxAddresses?: number;
  signal?: AbortSignal;
}

/**
 * Measure the local clock against `server`, trying its addresses in order
 * until one gives a usable reply.
 * @throws SntpResolveError when the name does not resolve
 * @throws SntpKissOfDeathError at once (the server speaks for all its addresses)
 * @throws SntpTimeoutError | SntpReplyError | SntpTransportError from the last address tried
 */
export async function querySntp(
  server: string,
  deps: SntpClientDeps,
  options: SntpQueryOptions = {},
): Promise<SntpSample> {
  let addresses: string[];
  try {
    addresses = isIpLiteral(server) ? [server] : await deps.resolve(server);
  } catch (e) {
    throw new SntpResolveError(server, { cause: e });
  }
  if (addresses.length === 0) throw new SntpResolveError(server);
  let last: SntpError | undefined;
  for (const address of addresses.slice(0, options.maxAddresses ?? 3)) {
    options.signal?.throwIfAborted();
    try {
      return await exchangeOnce(server, address, deps, options);
    } catch (e) {
      if (e instanceof SntpKissOfDeathError || !(e instanceof SntpError)) throw e;
      last = e;
    }
  }
  throw last!;
}

async function exchangeOnce(
  server: string,
  address: string,
  deps: SntpClientDeps,
  options: SntpQueryOptions,
): Promise<SntpSample> {
  const monotonic = deps.monotonic ?? (() => performance.now());
  const timeoutMs = options.timeoutMs ?? 2000;
  const t1 = deps.readClock();
  const transmit = unixNsToNtp(t1);
  const m0 = monotonic();
  let bytes: Uint8Array | null;
  try {
    bytes = await deps.transport.exchange(
      address,
      options.port ?? 123,
      encodeNtp(
        clientRequest(transmit),
      ),
      { timeoutMs, signal: options.signal },
    );
  } catch (e) {
    if (options.signal?.aborted) throw e;
    throw new SntpTransportError(server, address, { cause: e });
  }
  const elapsedNs = BigInt(Math.max(0, Math.round((monotonic() - m0) * 1e6)));
  if (bytes === null) throw new SntpTimeoutError(server, address, timeoutMs);
  let reply: NtpPacket;
  try {
    reply = decodeNtp(bytes);
  } catch (e) {
    throw new SntpReplyError(server, address, (e as Error).message);
  }
  checkReply(server, address, transmit, reply);
  const { offsetNs, delayNs } = offsetAndDelay({
    t1,
    t2: ntpToUnixNs(reply.receiveTimestamp),
    t3: ntpToUnixNs(reply.transmitTimestamp),
    t4: t1 + elapsedNs,
  });
  return {
    server,
    address,
    stratum: reply.stratum,
    reference: referenceText(reply),
    offsetNs,
    delayNs,
    offsetMs: nsToMs(offsetNs),
    delayMs: nsToMs(delayNs),
  };
}

/**
 * The RFC 4330 §5 sanity checks, in an order that keeps a spoofed packet
 * harmless: nothing, not even a kiss code, is believed unless it echoes our
 * transmit timestamp as its origin.
 * @throws SntpReplyError | SntpKissOfDeathError
 */
export function checkReply(
  server: string,
  address: string,
  sentTransmit: bigint,
  reply: NtpPacket,
): void {
  const bad = (reason: string) => new SntpReplyError(server, address, reason);
  if (reply.mode !== NTP_MODE.server) throw bad(`mode ${reply.mode}, expected 4 (server)`);
  if (reply.version < 1 || reply.version > 4) throw bad(`version ${reply.version}`);
  if (reply.originTimestamp !== sentTransmit) {
    throw bad(
      `origin timestamp 0x${reply.originTimestamp.toString(16)} does not match the request's ` +
        `0x${sentTransmit.toString(16)}`,
    );
  }
  if (reply.stratum === 0) {
    throw new SntpKissOfDeathError(server, address, referenceIdText(reply.referenceId) || "????");
  }
  if (reply.stratum > 15) throw bad(`stratum ${reply.stratum} (unsynchronised)`);
  if (reply.leap === LEAP_ALARM) throw bad("leap indicator 3 (server clock unsynchronised)");
  if (reply.transmitTimestamp === 0n) throw bad("transmit timestamp is zero");
  if (reply.receiveTimestamp === 0n) throw bad("receive timestamp is zero");
}

/** Stratum 1 names its source in ASCII (`GPS`, `LOCL`); anything else reads as an IPv4 address. */
function referenceText(p: NtpPacket): string {
  const text = referenceIdText(p.referenceId);
  if (p.stratum === 1 && /^[\x20-\x7e]+$/.test(text)) return text;
  const id = p.referenceId;
  return [id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff].join(".");
}
