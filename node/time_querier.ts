/**
 * The Time RPC's on-demand SNTP query, over controllers/time's client and UDP
 * transport: one measurement against a named server; the clock is not touched.
 */
import { dnsResolver, querySntp, UdpNtpTransport } from "../controllers/time/mod.ts";
import type { TimeQuerier, TimeSample } from "../api/server/time_query.ts";

/** A querier over the real network (loopback in tests). */
export function createSntpTimeQuerier(
  options: { transport?: UdpNtpTransport; timeoutMs?: number } = {},
): TimeQuerier {
  const transport = options.transport ?? new UdpNtpTransport();
  return {
    async query(host: string, port: number, signal?: AbortSignal): Promise<TimeSample> {
      const s = await querySntp(host, {
        transport,
        resolve: dnsResolver,
        readClock: () => BigInt(Date.now()) * 1_000_000n,
      }, { port, timeoutMs: options.timeoutMs ?? 2000, signal });
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
