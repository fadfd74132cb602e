/**
 * Typed failures of one SNTP query. The sync controller tells them apart to
 * decide what to do with a server: try the next one (timeout, bad reply,
 * resolution failure), back off from it (kiss code RATE) or stop asking it
 * (DENY, RSTR).
 * @module
 */

/** Base class: which configured server (and resolved address, if any) failed. */
export class SntpError extends Error {
  override name = "SntpError";
  constructor(
    /** The server as configured (name or IP). */
    readonly server: string,
    /** The IP the query went to; empty before resolution. */
    readonly address: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** No reply within the timeout. */
export class SntpTimeoutError extends SntpError {
  override name = "SntpTimeoutError";
  constructor(server: string, address: string, readonly timeoutMs: number) {
    super(server, address, `No NTP reply from "${server}" (${address}) within ${timeoutMs} ms`);
  }
}

/** The name did not resolve to any address. */
export class SntpResolveError extends SntpError {
  override name = "SntpResolveError";
  constructor(server: string, options?: ErrorOptions) {
    super(server, "", `Cannot resolve NTP server "${server}"`, options);
  }
}

/** A reply that must not be used, with the reason (origin mismatch, wrong mode...). */
export class SntpReplyError extends SntpError {
  override name = "SntpReplyError";
  constructor(server: string, address: string, readonly reason: string) {
    super(server, address, `Unusable NTP reply from "${server}" (${address}): ${reason}`);
  }
}

/**
 * Stratum 0 with a kiss code (RFC 5905 §7.4). `RATE` asks the client to poll
 * less often; `DENY` and `RSTR` to stop using the server.
 */
export class SntpKissOfDeathError extends SntpError {
  override name = "SntpKissOfDeathError";
  constructor(server: string, address: string, readonly code: string) {
    super(server, address, `NTP server "${server}" (${address}) sent kiss-of-death "${code}"`);
  }

  /** True for DENY and RSTR: the server must not be asked again. */
  get fatal(): boolean {
    return this.code === "DENY" || this.code === "RSTR";
  }
}

/** A datagram could not be sent or received (socket error). */
export class SntpTransportError extends SntpError {
  override name = "SntpTransportError";
  constructor(server: string, address: string, options?: ErrorOptions) {
    const cause = options?.cause instanceof Error ? `: ${options.cause.message}` : "";
    super(server, address, `Cannot exchange NTP packets with "${server}" (${address})${cause}`, {
      ...options,
    });
  }
}
