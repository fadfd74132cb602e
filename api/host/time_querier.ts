/**
 * The Time RPC's on-demand SNTP query, over controllers/time's client and UDP
 * transport: one measurement against a named server; the clock is not touched.
 * It sends to the NTP port only (the API never passes a port).
 */
import { dnsResolver, querySntp, UdpNtpTransport } from "../../controllers/time/mod.ts";
import { NTP_PORT, type TimeQuerier, type TimeSample } from "../server/mod.ts";

/** Options of {@link createSntpTimeQuerier}. */
export interface SntpTimeQuerierOptions {
  readonly transport?: UdpNtpTransport;
  /** Per address. @default 2000 */
  readonly timeoutMs?: number;
  /** Tests' loopback responders only; a node always uses 123. @default NTP_PORT */
  readonly port?: number;
}

/** A querier over the real network (loopback in tests). */
export function createSntpTimeQuerier(options: SntpTimeQuerierOptions = {}): TimeQuerier {
  const transport = options.transport ?? new UdpNtpTransport();
  return {
    async query(host: string, signal?: AbortSignal): Promise<TimeSample> {
      const s = await querySntp(host, {
        transport,
        resolve: dnsResolver,
        readClock: () => BigInt(Date.now()) * 1_000_000n,
      }, { port: options.port ?? NTP_PORT, timeoutMs: options.timeoutMs ?? 2000, signal });
      return {
        server: s.server,
        address: s.address,
        stratum: s.stratum,
        offsetMs: s.offsetMs,
        delayMs: s.delayMs,
      };
    },
  };
}
