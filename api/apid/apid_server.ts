/**
 * apid's public face: HTTP/2 + TLS 1.3 with a mandatory client certificate
 * from the node CA, speaking Connect, gRPC and gRPC-Web on one port. It
 * authenticates (peer_identity.ts), authorizes (auth/rbac.ts), bounds message
 * sizes and streams, answers reflection itself and forwards MachineService to
 * machined (forwarder.ts).
 */
import http2 from "node:http2";
import type { Http2Session } from "node:http2";
import type { TLSSocket } from "node:tls";
import {
  createContextKey,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { file_machined_v1_machine, MachineService } from "../gen/machined/v1/machine_pb.ts";
import type { CertificateAuthority, KeyedCertificate } from "../../pki/mod.ts";
import { callerKey } from "../auth/identity.ts";
import { authorize } from "../auth/rbac.ts";
import { authorizeMaintenance, MAINTENANCE_CALLER } from "../auth/maintenance.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../server/internal_server.ts";
import {
  createDedicatedUpstream,
  createForwardingService,
  createUpstreamTransport,
  responseControlKey,
  type StreamBufferLimits,
} from "./forwarder.ts";
import { decodeFailuresAreInvalidArgument } from "./decode_errors.ts";
import { createSendGate, type ResponseControl } from "./send_gate.ts";
import { createPeerVerifier, type PeerVerifier } from "./peer_identity.ts";
import { createMetricsRoute } from "./metrics_route.ts";
import { MetricsRegistry } from "../../metrics/mod.ts";
import {
  createReflectionIndex,
  REFLECTION_FILES,
  REFLECTION_SERVICES,
  registerReflection,
} from "./reflection.ts";

/** The API port. */
export const DEFAULT_API_PORT = 50000;

/** The connection a request arrived on, for the auth interceptor. */
const peerKey = createContextKey<{
  identify: PeerVerifier["identify"];
  session: Http2Session | undefined;
  socket: TLSSocket | undefined;
}>({
  identify: () => Promise.reject(new Error("no peer")),
  session: undefined,
  socket: undefined,
}, { description: "apid peer connection" });

/** Options of {@link startApidServer}. */
export interface ApidServerOptions {
  /** The node CA (its certificate verifies clients); absent only in maintenance mode. */
  readonly ca?: Pick<CertificateAuthority, "cert" | "certPem">;
  /**
   * Maintenance mode (the node has no CA yet): no client certificate is asked
   * for, and only what api/auth/maintenance.ts allows is answered.
   */
  readonly maintenance?: boolean;
  /** The server certificate and key. */
  readonly server: KeyedCertificate;
  /** machined's API socket. */
  readonly socketPath: string;
  /** @default "0.0.0.0" */
  readonly hostname?: string;
  /** 0 picks a free port. @default 50000 */
  readonly port?: number;
  /** @default 4 MiB */
  readonly readMaxBytes?: number;
  /** @default 4 MiB */
  readonly writeMaxBytes?: number;
  /** Concurrent streams per client connection. @default 100 */
  readonly maxConcurrentStreams?: number;
  /** Per-stream buffer between machined and a client (stream_buffer.ts). @default STREAM_BUFFER_DEFAULTS */
  readonly streamBuffer?: StreamBufferLimits;
  /** Unsent response bytes per client connection before streams wait. @default 1 MiB */
  readonly maxUnsentBytes?: number;
  /** Overrides the upstream transport (tests). @default the Unix socket transport */
  readonly upstream?: Transport;
}

/** A running apid server. */
export interface ApidServer {
  readonly port: number;
  readonly hostname: string;
  /** Open client connections. */
  readonly sessions: number;
  /** Stop accepting, end every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Bind the API port and serve.
 * @throws Error when the port cannot be bound.
 */
export async function startApidServer(options: ApidServerOptions): Promise<ApidServer> {
  const readMaxBytes = options.readMaxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const writeMaxBytes = options.writeMaxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const upstream = options.upstream ??
    createUpstreamTransport({
      socketPath: options.socketPath,
      readMaxBytes: writeMaxBytes,
      writeMaxBytes: readMaxBytes,
    });
  // Each client connection's server streams get an upstream connection of their own.
  const perClient = new WeakMap<Http2Session, Transport>();
  const streamTransport = options.upstream ? undefined : (ctx: HandlerContext) => {
    const session = ctx.values.get(peerKey).session;
    if (!session) return undefined;
    let t = perClient.get(session);
    if (!t) {
      const own = createDedicatedUpstream({
        socketPath: options.socketPath,
        readMaxBytes: writeMaxBytes,
        writeMaxBytes: readMaxBytes,
      });
      session.once("close", own.close);
      perClient.set(session, t = own.transport);
    }
    return t;
  };
  if (!options.maintenance && !options.ca) {
    throw new TypeError("apid needs a CA outside maintenance");
  }
  const verifier = createPeerVerifier(() => options.ca!);
  const index = createReflectionIndex(
    [file_machined_v1_machine, ...REFLECTION_FILES],
    [MachineService.typeName, ...REFLECTION_SERVICES],
  );

  const authInterceptor: Interceptor = (next) => async (req) => {
    if (options.maintenance) {
      authorizeMaintenance(
        req.service.typeName,
        req.method.name,
        req.stream ? undefined : req.message,
      );
      req.contextValues.set(callerKey, MAINTENANCE_CALLER);
      return next(req);
    }
    const pending = req.contextValues.get(peerKey);
    const caller = await pending.identify(pending.session, pending.socket);
    authorize(caller.role, req.service.typeName, req.method.name);
    req.contextValues.set(callerKey, caller);
    return next(req);
  };

  const handler = connectNodeAdapter({
    routes: (router) => {
      router.service(
        MachineService,
        createForwardingService(upstream, options.streamBuffer, streamTransport),
      );
      registerReflection(router, index);
      decodeFailuresAreInvalidArgument(router);
    },
    readMaxBytes,
    writeMaxBytes,
    interceptors: [authInterceptor],
    contextValues: (req) => {
      const session = (req as { stream?: { session?: Http2Session } }).stream?.session;
      return createContextValues().set(peerKey, {
        identify: verifier.identify,
        session,
        socket: req.socket as TLSSocket,
      }).set(responseControlKey, controls.get(req) ?? { overflow() {} });
    },
  });
  const gate = createSendGate({ maxUnsentBytes: options.maxUnsentBytes });
  const controls = new WeakMap<object, ResponseControl>();
  const gated: typeof handler = (req, res) => {
    controls.set(req, gate.track(req, res));
    return handler(req, res);
  };

  // Edge metrics, appended to machined's on GET /metrics (metrics_route.ts).
  const edge = new MetricsRegistry();
  const accepted = edge.counter("machined_apid_connections_total", "TLS connections accepted");
  const refused = edge.counter("machined_apid_tls_refused_total", "TLS handshakes refused");
  const open = edge.gauge("machined_apid_connections_open", "Client connections open now");
  const metricsRoute = createMetricsRoute({ verifier, upstream, edge });

  const sessions = new Set<Http2Session>();
  const server = http2.createSecureServer({
    key: options.server.keyPem,
    cert: options.server.certPem,
    ...(options.maintenance
      ? { requestCert: false, rejectUnauthorized: false }
      : { ca: options.ca!.certPem, requestCert: true, rejectUnauthorized: true }),
    minVersion: "TLSv1.3",
    allowHTTP1: true,
    settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 100 },
  }, (req, res) => metricsRoute(req, res) || gated(req, res));
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => {}); // an abrupt client must not become an uncaught error
  });
  server.on("secureConnection", (socket: TLSSocket) => {
    accepted.inc();
    open.add({}, 1);
    socket.once("close", () => open.add({}, -1));
  });
  // Refused handshakes are the TLS layer doing its job; they are only counted.
  server.on("tlsClientError", () => refused.inc());
  server.on("error", (e) => console.error("apid: server error", e));

  const hostname = options.hostname ?? "0.0.0.0";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_API_PORT, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;

  let closing: Promise<void> | undefined;
  return {
    port,
    hostname,
    get sessions() {
      return sessions.size;
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of sessions) s.destroy();
        await closed;
      })();
      return closing;
    },
  };
}
