/**
 * A CRI RuntimeService client over containerd's Unix socket: gRPC on one
 * HTTP/2 connection that is re-established on demand after containerd
 * restarts, with a deadline on every call so a wedged runtime reads as
 * "not answering" instead of hanging the probe.
 */
import net from "node:net";
import { type Client, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { RuntimeService } from "./gen/runtime/v1/api_pb.ts";

/** The runtime's identity, from `RuntimeService.Version`. */
export interface CriVersion {
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

/** One runtime condition, from `RuntimeService.Status`. */
export interface CriCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

/** What a CRI client can do; {@link createCriClient} is the real one. */
export interface CriClient {
  /** The socket it talks to. */
  readonly socket: string;
  /** @throws CriError when the call fails or exceeds its deadline. */
  version(signal?: AbortSignal): Promise<CriVersion>;
  /** @throws CriError when the call fails or exceeds its deadline. */
  status(signal?: AbortSignal): Promise<CriCondition[]>;
  /** Drops the connection; later calls reconnect. */
  close(): void;
}

/** A failed CRI call, with the method, the socket and the gRPC error as cause. */
export class CriError extends Error {
  override name = "CriError";
  constructor(
    readonly method: string,
    readonly socket: string,
    override readonly cause: unknown,
  ) {
    super(
      `CRI ${method} on "${socket}" failed: ${
        cause instanceof ConnectError ? cause.rawMessage : String(cause)
      }`,
      { cause },
    );
  }
}

/** Options of {@link createCriClient}. */
export interface CriClientOptions {
  /** Deadline of each call in ms. @default 2000 */
  readonly timeoutMs?: number;
}

/** The CRI API version machined asks for. */
export const CRI_API_VERSION = "v1";

/** A client for the CRI runtime service listening on the Unix socket `socket`. */
export function createCriClient(socket: string, options: CriClientOptions = {}): CriClient {
  const timeoutMs = options.timeoutMs ?? 2000;
  const baseUrl = "http://localhost";
  let manager: Http2SessionManager | undefined;
  let client: Client<typeof RuntimeService> | undefined;
  const connect = () => {
    if (!client) {
      manager = new Http2SessionManager(baseUrl, { idleConnectionTimeoutMs: 60_000 }, {
        createConnection: () => net.connect(socket),
      });
      client = createClient(
        RuntimeService,
        createGrpcTransport({ baseUrl, sessionManager: manager }),
      );
    }
    return client;
  };
  // A failed call may leave a dead session behind; start over on the next call.
  const reset = () => {
    manager?.abort();
    manager = undefined;
    client = undefined;
  };
  const call = async <T>(method: string, fn: (c: Client<typeof RuntimeService>) => Promise<T>) => {
    try {
      return await fn(connect());
    } catch (e) {
      reset();
      throw new CriError(method, socket, e);
    }
  };
  return {
    socket,
    version: (signal) =>
      call("Version", async (c) => {
        const r = await c.version({ version: CRI_API_VERSION }, { timeoutMs, signal });
        return {
          runtimeName: r.runtimeName,
          runtimeVersion: r.runtimeVersion,
          runtimeApiVersion: r.runtimeApiVersion,
        };
      }),
    status: (signal) =>
      call("Status", async (c) => {
        const r = await c.status({ verbose: false }, { timeoutMs, signal });
        return (r.status?.conditions ?? []).map((x) => ({
          type: x.type,
          status: x.status,
          reason: x.reason,
          message: x.message,
        }));
      }),
    close: reset,
  };
}
