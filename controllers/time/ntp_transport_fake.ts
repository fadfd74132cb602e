/**
 * FakeNtpTransport: NTP servers simulated in memory, one behaviour per
 * address (answer with an offset, time out, send a kiss code, echo a wrong
 * origin, fail the socket). Replies are built by the same code as the real
 * test responder. Server time is the request's transmit time plus the
 * configured offset, so the offset a client computes is exactly the one
 * configured, whatever clock the client reads. Every exchange is recorded.
 * @module
 */
import type { NtpExchangeOptions, NtpTransport } from "./ntp_transport.ts";
import { decodeNtp, encodeNtp, ntpToUnixNs } from "./sntp_packet.ts";
import { type ResponderBehaviour, serverReply } from "./sntp_responder.ts";

/** How a simulated address behaves. */
export type FakeServerBehaviour =
  | ({ kind: "reply" } & ResponderBehaviour)
  | { kind: "timeout" }
  | { kind: "socket-error"; error: Error }
  | { kind: "raw"; bytes: Uint8Array };

/** One exchange the transport saw. */
export interface FakeExchange {
  address: string;
  port: number;
  request: Uint8Array;
}

/** The in-memory transport. Unknown addresses time out, like a silent host. */
export class FakeNtpTransport implements NtpTransport {
  readonly exchanges: FakeExchange[] = [];
  #servers = new Map<string, FakeServerBehaviour>();

  /** Set how `address` answers (replacing any earlier behaviour). */
  setServer(address: string, behaviour: FakeServerBehaviour): this {
    this.#servers.set(address, behaviour);
    return this;
  }

  /** Exchanges sent to `address`. */
  exchangesWith(address: string): FakeExchange[] {
    return this.exchanges.filter((e) => e.address === address);
  }

  exchange(
    address: string,
    port: number,
    request: Uint8Array,
    options: NtpExchangeOptions,
  ): Promise<Uint8Array | null> {
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    this.exchanges.push({ address, port, request: request.slice() });
    const b = this.#servers.get(address) ?? { kind: "timeout" };
    switch (b.kind) {
      case "timeout":
        return Promise.resolve(null);
      case "socket-error":
        return Promise.reject(b.error);
      case "raw":
        return Promise.resolve(b.bytes.slice());
      case "reply": {
        const req = decodeNtp(request);
        const nowNs = ntpToUnixNs(req.transmitTimestamp) +
          BigInt(Math.round((b.offsetMs ?? 0) * 1e6));
        return Promise.resolve(encodeNtp(serverReply(req, nowNs, b)));
      }
    }
  }
}
