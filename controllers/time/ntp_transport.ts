/**
 * The UDP exchange behind the SNTP client, as a small interface so the
 * client and the sync controller run root-free and deterministic against
 * {@link FakeNtpTransport}, and against real servers through
 * {@link UdpNtpTransport}.
 * @module
 */

/** Where and how long to wait. */
export interface NtpExchangeOptions {
  /** Give up after this long without a matching reply. */
  timeoutMs: number;
  /** Aborts the exchange early (the controller's cycle signal). */
  signal?: AbortSignal;
}

/**
 * Sends one datagram and waits for the reply.
 *
 * Idempotence: each call is an independent exchange on its own socket; a
 * datagram from any other address or port is ignored, not returned.
 */
export interface NtpTransport {
  /**
   * Send `request` to `address`:`port` (an IPv4 or IPv6 literal) and resolve
   * with the first datagram that comes back from there, or `null` when none
   * arrives within the timeout.
   * @throws Error for socket failures (unreachable network, bad address)
   * @throws the signal's reason when aborted
   */
  exchange(
    address: string,
    port: number,
    request: Uint8Array,
    options: NtpExchangeOptions,
  ): Promise<Uint8Array | null>;
}

/** Resolves a host name to IP addresses, in preference order. */
export type HostResolver = (host: string) => Promise<string[]>;

/**
 * DNS resolution through `Deno.resolveDns`: A records first, then AAAA.
 * An IP literal resolves to itself without a query.
 * @throws Error from the resolver when neither query returns an address
 */
export const dnsResolver: HostResolver = async (host) => {
  if (isIpLiteral(host)) return [host];
  const results = await Promise.allSettled([
    Deno.resolveDns(host, "A"),
    Deno.resolveDns(host, "AAAA"),
  ]);
  const addresses = results.flatMap((r) => r.status === "fulfilled" ? r.value : []);
  if (addresses.length > 0) return addresses;
  const failure = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
  throw failure?.reason ?? new Error(`no A or AAAA records for "${host}"`);
};

/** True for a dotted IPv4 or a bracket-free IPv6 literal. */
export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) ||
    (host.includes(":") && /^[0-9a-fA-F:.]+$/.test(host));
}
