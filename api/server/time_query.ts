/**
 * The Time RPC's on-demand measurement: one SNTP exchange with a server the
 * caller names, which does not touch the clock. Defined here so the API does
 * not import controllers/; machined passes controllers/time's client.
 */

/** One measurement. */
export interface TimeSample {
  readonly server: string;
  readonly address: string;
  readonly stratum: number;
  readonly offsetMs: number;
  readonly delayMs: number;
}

/** Measures the local clock against a server. */
export interface TimeQuerier {
  /**
   * @throws Error (the SNTP client's typed errors: resolve, timeout, reply,
   * kiss-of-death), answered as Unavailable.
   */
  query(host: string, port: number, signal?: AbortSignal): Promise<TimeSample>;
}

/**
 * `host`, `host:port`, `v6` or `[v6]:port` → host and port (123 by default).
 * @throws RangeError on an empty host or a port outside 1..65535
 */
export function parseTimeServer(server: string): { host: string; port: number } {
  const s = server.trim();
  let host = s;
  let port = 123;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  const hostPort = /^([^:]+):(\d+)$/.exec(s);
  if (bracket) [host, port] = [bracket[1], bracket[2] ? Number(bracket[2]) : 123];
  else if (hostPort) [host, port] = [hostPort[1], Number(hostPort[2])];
  if (host === "" || /[\s/]/.test(host)) throw new RangeError(`Invalid time server "${server}"`);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`Invalid port in time server "${server}"`);
  }
  return { host, port };
}
