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
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** TLS server name to check. @default the endpoint host */
  readonly serverName?: string;
  /** @default 4 MiB */
  readonly readMaxBytes?: number;
  /** @default 4 MiB */
  readonly writeMaxBytes?: number;
}

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
  const sessionManager = new Http2SessionManager(baseUrl, {}, {
    ca: options.caPem,
    cert: options.certPem,
    key: options.keyPem,
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
