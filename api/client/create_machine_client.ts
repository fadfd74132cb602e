/**
 * A MachineService client over mutual TLS, for machinectl and tests: gRPC on
 * one kept-alive HTTP/2 connection, closed explicitly.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";

/** Where and as whom to connect. */
export interface MachineClientOptions {
  /** `host:port` or a full `https://host:port` URL. */
  readonly endpoint: string;
  /** The CA the server certificate must chain to (in maintenance: the pinned certificate itself). */
  readonly caPem?: string;
  /** Client certificate and key; both absent for a maintenance-mode call. */
  readonly certPem?: string;
  readonly keyPem?: string;
  /**
   * Maintenance mode (api/client/insecure.ts): `pinned` trusts exactly the
   * certificate in `caPem`, whatever names it carries (its fingerprint was
   * checked); `unverified` trusts any server (`--insecure` without
   * `--fingerprint`).
   */
  readonly insecure?: "pinned" | "unverified";
  /** TLS server name to check. @default the endpoint host */
  readonly serverName?: string;
  /** @default 4 MiB */
  readonly readMaxBytes?: number;
  /** @default 4 MiB */
  readonly writeMaxBytes?: number;
  /**
   * Bound on the TCP connect and TLS handshake together; past it the call
   * fails Unavailable ("connection establishment timed out").
   * @default CONNECT_TIMEOUT_MS
   */
  readonly connectTimeoutMs?: number;
}

/**
 * How long a client waits for a connection to a node (TCP and TLS): the
 * edge's own handshake budget, so a node that accepted the connection has
 * answered or refused by then.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A typed client and the connection under it. */
export interface MachineClient {
  readonly api: Client<typeof MachineService>;
  /** Closes the connection; calls in flight fail with Canceled. */
  close(): void;
}

/** Connect lazily (on the first call) to a node's API. */
export function createMachineClient(options: MachineClientOptions): MachineClient {
  const baseUrl = options.endpoint.includes("://")
    ? options.endpoint
    : `https://${options.endpoint}`;
  const Manager = new URL(baseUrl).hostname.startsWith("[")
    ? BracketedAuthoritySessionManager
    : Http2SessionManager;
  const sessionManager = new Manager(baseUrl, {
    connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
  }, {
    ...(options.insecure === "unverified" ? { rejectUnauthorized: false } : { ca: options.caPem }),
    ...(options.insecure === "pinned" ? { checkServerIdentity: () => undefined } : {}),
    ...(options.certPem ? { cert: options.certPem, key: options.keyPem } : {}),
    ...(options.serverName ? { servername: options.serverName } : {}),
  });
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
  });
  return {
    api: createClient(MachineService, transport),
    close: () => sessionManager.abort(),
  };
}

/**
 * Deno's node:http2 client sends an IPv6 literal's `:authority` without its
 * brackets (`fd99::1:50000`), which is not a valid authority: machined-edge's
 * HTTP/2 server resets every such stream with PROTOCOL_ERROR, so no call to a
 * node's IPv6 address could succeed. This manager sets `:authority` itself,
 * bracketed, on each request (found by the network QEMU case's SLAAC step).
 */
export class BracketedAuthoritySessionManager extends Http2SessionManager {
  readonly #authority: string;

  constructor(...args: ConstructorParameters<typeof Http2SessionManager>) {
    super(...args);
    this.#authority = new URL(String(args[0])).host;
  }

  override request(
    ...[method, path, headers, options]: Parameters<Http2SessionManager["request"]>
  ): ReturnType<Http2SessionManager["request"]> {
    return super.request(method, path, { ...headers, ":authority": this.#authority }, options);
  }
}
