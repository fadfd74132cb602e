/**
 * apid's MachineService: every call is forwarded, unchanged, to machined over
 * its Unix socket as gRPC on cleartext HTTP/2, with the verified caller in
 * headers and the client's deadline and cancellation carried along. Built
 * from the service descriptor, so a new RPC is forwarded without code here.
 * Server streams go through a bounded buffer (stream_buffer.ts): a client
 * that stops reading gets the RPC's overflow marker and ResourceExhausted.
 */
import * as net from "node:net";
import { create, type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  Code,
  ConnectError,
  createClient,
  createContextKey,
  type HandlerContext,
  type ServiceImpl,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  DmesgResponseSchema,
  EventsResponseSchema,
  MachineService,
  WatchResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { callerKey, identityToHeaders } from "../auth/identity.ts";
import { boundedStream, type BoundedStreamOptions } from "./stream_buffer.ts";
import type { ResponseControl } from "./send_gate.ts";

/** The response of the call being handled, for a stream that overflows. */
export const responseControlKey = createContextKey<ResponseControl>({ overflow() {} }, {
  description: "apid response control",
});

type Methods = typeof MachineService.method;
/** The local names of MachineService's server-streaming RPCs. */
type StreamingMethod = {
  [K in keyof Methods]: Methods[K]["methodKind"] extends "server_streaming" ? K : never;
}[keyof Methods];

/**
 * The message each server stream uses to say "you lost messages"; a stream
 * without one (Logs: its `seq` jumps) only ends with ResourceExhausted.
 */
const OVERFLOW_MARKERS: {
  [K in StreamingMethod]: ((dropped: number) => unknown) | undefined;
} = {
  watch: (dropped) =>
    create(WatchResponseSchema, {
      event: { case: "overflow", value: { dropped: BigInt(dropped) } },
    }),
  events: (dropped) =>
    create(EventsResponseSchema, {
      event: {
        kind: "overflow",
        action: "dropped",
        message: `${dropped} events were dropped because this client fell behind`,
        fields: { dropped: String(dropped) },
      },
    }),
  dmesg: () => create(DmesgResponseSchema, { item: { case: "lost", value: {} } }),
  logs: undefined,
};

/** Per-stream buffer bounds (the marker and callbacks are per call). */
export type StreamBufferLimits = Pick<
  BoundedStreamOptions<unknown>,
  "maxMessages" | "maxBytes" | "stallMs"
>;

/** HTTP/2 receive window per upstream stream, in bytes. */
export const UPSTREAM_STREAM_WINDOW = 16 * 1024;
/**
 * The upstream connection's receive window: wide enough that streams apid is
 * not reading (each holding up to its own window) never starve the others of
 * connection-level credit. The per-stream window is what bounds memory.
 */
export const UPSTREAM_CONNECTION_WINDOW = 64 * 1024 * 1024;

/** A session manager that widens each new connection's receive window. */
class UpstreamSessionManager extends Http2SessionManager {
  #widened = new WeakSet<object>();
  override async request(
    ...args: Parameters<Http2SessionManager["request"]>
  ): ReturnType<Http2SessionManager["request"]> {
    const stream = await super.request(...args);
    const session = stream.session;
    if (session && !this.#widened.has(session)) {
      this.#widened.add(session);
      session.setLocalWindowSize(UPSTREAM_CONNECTION_WINDOW);
    }
    return stream;
  }
}

function upstreamSessionManager(socketPath: string): Http2SessionManager {
  return new UpstreamSessionManager("http://machined", {
    // Keep the connection alive across idle periods; HTTP/2 PINGs detect a dead machined.
    idleConnectionTimeoutMs: 5 * 60 * 1000,
    pingIntervalMs: 30_000,
  }, {
    // A small per-stream window: a stream apid is not reading holds back machined sooner.
    settings: { initialWindowSize: UPSTREAM_STREAM_WINDOW },
    createConnection: () => net.connect(socketPath),
  });
}

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
    sessionManager: upstreamSessionManager(options.socketPath),
  });
}

/** A transport of its own for one call, closed when the call ends. */
export interface DedicatedUpstream {
  readonly transport: Transport;
  close(): void;
}

/**
 * An HTTP/2 connection to machined of its own, for the server streams of one
 * client connection. machined's send gate bounds what it buffers per
 * connection (Deno gives no per-stream back-pressure), so the streams of a
 * client that stops reading are held back together, down to machined's
 * bounded watch queues, and other clients' streams are not.
 */
export function createDedicatedUpstream(options: UpstreamOptions): DedicatedUpstream {
  const sessionManager = upstreamSessionManager(options.socketPath);
  const transport = createGrpcTransport({
    baseUrl: "http://machined",
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
    sessionManager,
  });
  return { transport, close: () => sessionManager.abort() };
}

type AnyMethod = (req: unknown, options?: CallOptions) => unknown;

/** A MachineService implementation that forwards every call through `transport`. */
export function createForwardingService(
  transport: Transport,
  limits: StreamBufferLimits = {},
  /** The transport for a call's server streams (per client connection); without it, `transport`. */
  streamTransport?: (ctx: HandlerContext) => Transport | undefined,
): ServiceImpl<typeof MachineService> {
  const client: Client<typeof MachineService> = createClient(MachineService, transport);
  const clients = new WeakMap<Transport, Record<string, AnyMethod>>();
  const streamCall = (localName: string, ctx: HandlerContext): AnyMethod => {
    const own = streamTransport?.(ctx);
    if (!own) return (client as unknown as Record<string, AnyMethod>)[localName].bind(client);
    let c = clients.get(own);
    if (!c) clients.set(own, c = createClient(MachineService, own) as never);
    return c[localName].bind(c);
  };
  const impl: Record<string, unknown> = {};
  for (const method of MachineService.methods) {
    const call = (client as unknown as Record<string, AnyMethod>)[method.localName].bind(client);
    switch (method.methodKind) {
      case "unary":
        impl[method.localName] = (req: unknown, ctx: HandlerContext) => call(req, callOptions(ctx));
        break;
      case "server_streaming":
        impl[method.localName] = (req: unknown, ctx: HandlerContext) => {
          const upstream = new AbortController();
          const cancel = () => upstream.abort(ctx.signal.reason);
          ctx.signal.addEventListener("abort", cancel, { once: true });
          const options = { ...callOptions(ctx), signal: upstream.signal };
          const output = method.output as DescMessage;
          const upstreamCall = streamCall(method.localName, ctx);
          return boundedStream(upstreamCall(req, options) as AsyncIterable<unknown>, {
            ...limits,
            sizeOf: (m) => toBinary(output, m as MessageShape<typeof output>).byteLength,
            overflowMarker: OVERFLOW_MARKERS[method.localName as StreamingMethod],
            onOverflow: () => ctx.values.get(responseControlKey).overflow(),
            cancelUpstream: cancel,
          });
        };
        break;
      case "client_streaming":
        // Upgrade: the client's messages pass through as they arrive (HTTP/2
        // flow control on both legs bounds what apid holds).
        impl[method.localName] = (reqs: AsyncIterable<unknown>, ctx: HandlerContext) =>
          call(reqs, callOptions(ctx));
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
