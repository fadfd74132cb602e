/**
 * A small SNTP server (RFC 4330 server mode) for tests and development: it
 * answers on a UDP port with its own clock plus a configurable offset, so a
 * client sees a known offset, and can send kiss-of-death codes or misbehave
 * on purpose. The fake transport builds its replies with the same
 * {@link serverReply}.
 * @module
 */
import dgram from "node:dgram";
import {
  decodeNtp,
  encodeNtp,
  LEAP_ALARM,
  NTP_MODE,
  type NtpPacket,
  referenceIdFromText,
  unixNsToNtp,
} from "./sntp_packet.ts";

/** How a server answers. */
export interface ResponderBehaviour {
  /** Added to the server's clock: the offset a client with a correct clock measures. @default 0 */
  offsetMs?: number;
  /** @default 2 */
  stratum?: number;
  /** Answer with stratum 0 and this kiss code (`RATE`, `DENY`, `RSTR`) instead. */
  kiss?: string;
  /** Send leap indicator 3 (unsynchronised). */
  unsynchronised?: boolean;
  /** Echo a wrong origin timestamp (what a spoofed or stale reply looks like). */
  wrongOrigin?: boolean;
}

/**
 * The reply a server with clock `nowNs` (Unix ns, offset already applied)
 * sends to `request`.
 */
export function serverReply(
  request: NtpPacket,
  nowNs: bigint,
  behaviour: ResponderBehaviour = {},
): NtpPacket {
  const origin = behaviour.wrongOrigin
    ? request.transmitTimestamp ^ 0xffffn
    : request.transmitTimestamp;
  if (behaviour.kiss !== undefined) {
    return {
      leap: LEAP_ALARM,
      version: request.version,
      mode: NTP_MODE.server,
      stratum: 0,
      poll: request.poll,
      precision: -20,
      rootDelay: 0,
      rootDispersion: 0,
      referenceId: referenceIdFromText(behaviour.kiss),
      referenceTimestamp: 0n,
      originTimestamp: origin,
      receiveTimestamp: 0n,
      transmitTimestamp: 0n,
    };
  }
  const stratum = behaviour.stratum ?? 2;
  const now = unixNsToNtp(nowNs);
  return {
    leap: behaviour.unsynchronised ? LEAP_ALARM : 0,
    version: request.version,
    mode: NTP_MODE.server,
    stratum,
    poll: request.poll,
    precision: -20,
    rootDelay: 0.0005,
    rootDispersion: 0.001,
    referenceId: stratum === 1 ? referenceIdFromText("LOCL") : 0x7f00_0001,
    referenceTimestamp: now,
    originTimestamp: origin,
    receiveTimestamp: now,
    transmitTimestamp: now,
  };
}

/** A running responder. */
export interface SntpResponder {
  readonly address: string;
  readonly port: number;
  /** Requests answered so far. */
  readonly requests: number;
  /** Change how it answers from now on. */
  behaviour: ResponderBehaviour;
  close(): Promise<void>;
}

/** Where to listen and how to answer. */
export interface ResponderOptions extends ResponderBehaviour {
  /** @default "127.0.0.1" */
  hostname?: string;
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** The server's clock, Unix ms. @default Date.now */
  now?: () => number;
  /**
   * Bind with SO_REUSEADDR, so another responder (another process) may hold
   * the same address and port at once; Linux then hands each request to the
   * one bound last, and to the other once that one closes. For responders
   * that answer alike (the host's clock on 127.0.0.1:123 for QEMU guests).
   * @default false
   */
  shared?: boolean;
}

/** Start a responder; close it when done. */
export async function startSntpResponder(options: ResponderOptions = {}): Promise<SntpResponder> {
  const { hostname = "127.0.0.1", port = 0, now = Date.now, shared = false, ...behaviour } =
    options;
  const socket = dgram.createSocket({
    type: hostname.includes(":") ? "udp6" : "udp4",
    reuseAddr: shared,
  });
  let requests = 0;
  const responder: SntpResponder = {
    address: hostname,
    port: 0,
    get requests() {
      return requests;
    },
    behaviour,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on("message", (msg: Uint8Array, from: { address: string; port: number }) => {
    let request: NtpPacket;
    try {
      request = decodeNtp(new Uint8Array(msg));
    } catch {
      return; // not NTP: ignore, as a server would
    }
    if (request.mode !== NTP_MODE.client) return;
    requests++;
    const b = responder.behaviour;
    const nowNs = BigInt(Math.round((now() + (b.offsetMs ?? 0)) * 1e3)) * 1000n;
    socket.send(encodeNtp(serverReply(request, nowNs, b)), from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, hostname, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  Object.defineProperty(responder, "port", { value: socket.address().port });
  return responder;
}
