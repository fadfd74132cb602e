/**
 * The Time RPC's on-demand measurement: one SNTP exchange with a server the
 * caller names, which does not touch the clock. Defined here so the API does
 * not import controllers/; machined passes controllers/time's client.
 *
 * Naming a server makes the node send UDP, so it is bounded (docs/decisions.md,
 * "Time with a server"): the port is always 123, never the caller's; a server
 * outside `machine.time.servers` needs os:operator (api/auth/rbac.ts,
 * {@link TIME_SERVER_ROLES}); the queries share one per-node token bucket
 * ({@link TIME_QUERY_BUDGET}); each has a deadline.
 */

/** One measurement. */
export interface TimeSample {
  readonly server: string;
  readonly address: string;
  readonly stratum: number;
  readonly offsetMs: number;
  readonly delayMs: number;
}

/** Measures the local clock against a server, on the NTP port. */
export interface TimeQuerier {
  /**
   * @throws Error (the SNTP client's typed errors: resolve, timeout, reply,
   * kiss-of-death), answered as Unavailable.
   */
  query(host: string, signal?: AbortSignal): Promise<TimeSample>;
}

/** The NTP port: the only one Time sends to. */
export const NTP_PORT = 123;

/**
 * The per-node budget of Time queries naming a server: a token bucket shared
 * by every caller, and the deadline of one query.
 */
export const TIME_QUERY_BUDGET = {
  /** Tokens added per second. */
  ratePerSecond: 2,
  /** Bucket size: queries that may go at once after a quiet spell. */
  burst: 4,
  /** One query's deadline (all addresses of the name). */
  timeoutMs: 3000,
} as const;

/**
 * `host`, `v6` or `[v6]`, optionally with `:123` → the host.
 * @throws RangeError on an empty host, or a port other than 123 (Time never
 *   sends elsewhere: a caller-chosen port would make the node a UDP probe)
 */
export function parseTimeServer(server: string): string {
  const s = server.trim();
  let host = s;
  let port: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d*))?$/.exec(s);
  const hostPort = /^([^:]+):(\d*)$/.exec(s);
  if (bracket) [host, port] = [bracket[1], bracket[2]];
  else if (hostPort) [host, port] = [hostPort[1], hostPort[2]];
  if (host === "" || /[\s/\[\]]/.test(host)) {
    throw new RangeError(`Invalid time server "${server}"`);
  }
  if (port !== undefined && Number(port) !== NTP_PORT) {
    throw new RangeError(
      `Invalid time server "${server}": Time queries port ${NTP_PORT} only; give the host alone`,
    );
  }
  return host;
}

/** A token bucket (monotonic clock in ms); `take` says whether a query may go now. */
export interface TokenBucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Takes one token; false (and nothing taken) when the bucket is empty. */
  take(): boolean;
  /** Milliseconds until a token is available (0 when one is). */
  waitMs(): number;
}

/** A bucket of `burst` tokens refilled at `ratePerSecond`, full at start. */
export function createTokenBucket(
  options: { ratePerSecond: number; burst: number; now?: () => number },
): TokenBucket {
  const now = options.now ?? (() => performance.now());
  let tokens = options.burst;
  let at = now();
  const refill = () => {
    const t = now();
    tokens = Math.min(options.burst, tokens + ((t - at) / 1000) * options.ratePerSecond);
    at = t;
  };
  return {
    ratePerSecond: options.ratePerSecond,
    burst: options.burst,
    take() {
      refill();
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    waitMs() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / options.ratePerSecond) * 1000);
    },
  };
}
