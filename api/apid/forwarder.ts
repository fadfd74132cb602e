/**
 * apid's MachineService: every call is forwarded, unchanged, to machined over
 * its Unix socket as gRPC on cleartext HTTP/2, with the verified caller in
 * headers and the client's deadline and cancellation carried along. Built
 * from the service descriptor, so a new RPC is forwarded without code here.
 */
import * as net from "node:net";
import {
  type CallOptions,
  type Client,
  Code,
  ConnectError,
  createClient,
  type HandlerContext,
  type ServiceImpl,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { callerKey, identityToHeaders } from "../auth/identity.ts";

/** Options of {@link createUpstreamTransport}. */
export interface UpstreamOptions {
  /** machined's API socket. */
  readonly socketPath: string;
  /** Bound on messages read from machined. */
  readonly readMaxBytes: number;
  readonly writeMaxBytes: number;
}

/** A gRPC transport to machined over its Unix socket (one multiplexed HTTP/2 connection). */
export function createUpstreamTransport(options: UpstreamOptions): Transport {
  return createGrpcTransport({
    baseUrl: "http://machined",
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
    // Keep the connection alive across idle periods; HTTP/2 PINGs detect a dead machined.
    idleConnectionTimeoutMs: 5 * 60 * 1000,
    pingIntervalMs: 30_000,
    nodeOptions: { createConnection: () => net.connect(options.socketPath) },
  });
}

type AnyMethod = (req: unknown, options?: CallOptions) => unknown;

/** A MachineService implementation that forwards every call through `transport`. */
export function createForwardingService(transport: Transport): ServiceImpl<typeof MachineService> {
  const client: Client<typeof MachineService> = createClient(MachineService, transport);
  const impl: Record<string, unknown> = {};
  for (const method of MachineService.methods) {
    const call = (client as unknown as Record<string, AnyMethod>)[method.localName].bind(client);
    switch (method.methodKind) {
      case "unary":
        impl[method.localName] = (req: unknown, ctx: HandlerContext) => call(req, callOptions(ctx));
        break;
      case "server_streaming":
        impl[method.localName] = async function* (req: unknown, ctx: HandlerContext) {
          yield* call(req, callOptions(ctx)) as AsyncIterable<unknown>;
        };
        break;
      default:
        throw new TypeError(
          `Cannot forward ${MachineService.typeName}/${method.name}: ${method.methodKind} is not supported`,
        );
    }
  }
  return impl as ServiceImpl<typeof MachineService>;
}

function callOptions(ctx: HandlerContext): CallOptions {
  const caller = ctx.values.get(callerKey);
  if (!caller) throw new ConnectError("Call carries no verified caller", Code.Unauthenticated);
  const headers = new Headers();
  identityToHeaders(caller, headers);
  return { headers, signal: ctx.signal, timeoutMs: ctx.timeoutMs() };
}
