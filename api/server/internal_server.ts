/**
 * The machined end of the edge → machined hop: MachineService and gRPC
 * reflection over cleartext HTTP/2 on a Unix socket, in Connect, gRPC and
 * gRPC-Web, plus `GET /metrics`. Only the edge (the Rust machined-edge, or the
 * Deno apid) can open the socket (mode 0660, group = its own), which is why
 * the identity headers it sets are trusted here. RBAC, maintenance mode's
 * rules and the decoding of messages are machined's: machined-edge forwards
 * frames without reading them.
 */
import http2 from "node:http2";
import type { Http2Server, Http2Session } from "node:http2";
import { dirname } from "node:path";
import { createContextValues, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { listenUnixStream, type UnixStreamListener } from "../../platform/unix_stream/mod.ts";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { type CallerIdentity, callerKey, identityFromHeaders } from "../auth/mod.ts";
import { authorize } from "../auth/mod.ts";
import { UnauthenticatedError } from "../errors/mod.ts";
import { errorMappingInterceptor } from "./errors.ts";
import { createAuditInterceptor } from "./audit.ts";
import { createSendGate } from "./send_gate.ts";
import { checkMaintenanceCall, type MaintenanceGate } from "./maintenance_gate.ts";
import { createMachineService, type MachineServiceDeps } from "./machine_service.ts";
import { createApiMetricsInterceptor } from "./api_metrics.ts";
import { createWatchFanout } from "./watch_fanout.ts";
import { createWatchRoute } from "./watch_route.ts";
import { createUnaryRoute } from "./unary_route.ts";
import { decodeFailuresAreInvalidArgument } from "./decode_errors.ts";
import { reflectionRoutes } from "./reflection_routes.ts";
import { streamDeadlineInterceptor } from "./stream_deadline.ts";
import { createInternalMetricsRoute } from "./metrics_route.ts";
import { releaseOnClose } from "./h2_session_release.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";

/** 4 MiB: the default bound on one message in either direction. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Options of {@link startInternalApiServer}. */
export interface InternalApiServerOptions {
  /** Unix socket path; a stale socket there is replaced. */
  readonly socketPath: string;
  readonly deps: MachineServiceDeps;
  /** Where API calls are counted (`machined_api_*`); none when absent. */
  readonly registry?: MetricsRegistry;
  /** Group owning the socket (apid's), set when running as root. */
  readonly socketGroup?: number;
  /** @default DEFAULT_MAX_MESSAGE_BYTES */
  readonly readMaxBytes?: number;
  /** @default DEFAULT_MAX_MESSAGE_BYTES */
  readonly writeMaxBytes?: number;
  /** Streams per connection; apid multiplexes every client over one. @default 100000 */
  readonly maxConcurrentStreams?: number;
  /**
   * Told, while `wanted()` holds, when a call's response has finished, with
   * the caller the edge forwarded: how machined learns when a client was
   * first served (api/host/api_host.ts stops wanting it then, so later calls
   * cost nothing).
   */
  readonly answered?: {
    wanted(): boolean;
    done(caller: CallerIdentity | undefined): void;
  };
}

/** A running internal server. */
export interface InternalApiServer {
  readonly socketPath: string;
  /** Open HTTP/2 sessions (apid connections). */
  readonly sessions: number;
  /** Open Watch streams (they share one store subscription per type, namespace and id). */
  readonly watchStreams: number;
  /** Stops listening, ends every session and removes the socket. Idempotent. */
  close(): Promise<void>;
}

/** Refuses calls without forwarded identity and re-checks RBAC (or maintenance mode's rules). */
const trustedIdentityInterceptor =
  (gate: MaintenanceGate | undefined): Interceptor => (next) => (req) => {
    const caller = req.contextValues.get(callerKey);
    if (!caller) {
      throw new UnauthenticatedError("Call carries no caller identity", {
        context: { method: req.method.name },
      });
    }
    const maintenance = checkMaintenanceCall(gate, caller, req, next);
    if (maintenance) return maintenance;
    authorize(caller.role, req.service.typeName, req.method.name);
    return next(req);
  };

/**
 * Listen on `socketPath` and serve MachineService to apid.
 * @throws Error when the socket cannot be bound.
 */
export async function startInternalApiServer(
  options: InternalApiServerOptions,
): Promise<InternalApiServer> {
  const { socketPath } = options;
  const readMaxBytes = options.readMaxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const writeMaxBytes = options.writeMaxBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const fanout = createWatchFanout(options.deps.store);
  const watchRoute = createWatchRoute({
    fanout,
    readMaxBytes,
    writeMaxBytes,
    registry: options.registry,
  });
  const impl = createMachineService(options.deps, fanout);
  const unaryRoute = createUnaryRoute({
    impl,
    readMaxBytes,
    writeMaxBytes,
    registry: options.registry,
  });
  const handler = connectHandler(options, impl, readMaxBytes, writeMaxBytes);
  const sessions = new Set<Http2Session>();
  // Deno's HTTP/2 server buffers writes without bound; the gate holds a
  // connection's streams past 256 KiB unsent (apid gives each server stream
  // its own connection, so a stream apid stops reading is held back alone).
  const gate = createSendGate({ maxUnsentBytes: 256 * 1024 });
  const metricsRoute = createInternalMetricsRoute(options.deps.metrics, options.registry);
  const server = http2.createServer({
    settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 100_000 },
  }, (req, res) => {
    const answered = options.answered;
    if (answered?.wanted()) {
      const caller = identityFromHeaders((name) => headerValue(req.headers[name]));
      res.once("finish", () => answered.done(caller));
    }
    if (metricsRoute(req, res)) return;
    gate.track(req, res);
    // Watch, Get and List over gRPC are served directly (watch_route.ts, unary_route.ts);
    // the rest by Connect.
    if (watchRoute(req, res) || unaryRoute(req, res)) return;
    return handler(req, res);
  });
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => {}); // a dying peer must not become an uncaught error
    releaseOnClose(session); // Deno 2.9.3 keeps every closed session otherwise
  });
  const listener = await listenOnSocket(server, socketPath, options.socketGroup);

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    get sessions() {
      return sessions.size;
    },
    get watchStreams() {
      return fanout.hub.watches;
    },
    close() {
      closing ??= (async () => {
        await listener.close();
        for (const s of sessions) s.destroy();
        await Deno.remove(socketPath).catch(() => {});
      })();
      return closing;
    },
  };
}

/** The Connect handler: MachineService and reflection behind the interceptor chain. */
function connectHandler(
  options: InternalApiServerOptions,
  impl: ServiceImpl<typeof MachineService>,
  readMaxBytes: number,
  writeMaxBytes: number,
): ReturnType<typeof connectNodeAdapter> {
  return connectNodeAdapter({
    routes: (router) => {
      router.service(MachineService, impl);
      reflectionRoutes(router);
      decodeFailuresAreInvalidArgument(router);
    },
    readMaxBytes,
    writeMaxBytes,
    interceptors: [
      ...(options.registry ? [createApiMetricsInterceptor(options.registry)] : []),
      errorMappingInterceptor,
      ...(options.deps.audit ? [createAuditInterceptor(options.deps.audit)] : []),
      trustedIdentityInterceptor(options.deps.maintenance),
      streamDeadlineInterceptor,
    ],
    contextValues: (req) =>
      createContextValues().set(
        callerKey,
        identityFromHeaders((name) => headerValue(req.headers[name])),
      ),
  });
}

/**
 * Binds `socketPath` (replacing a stale socket) with mode 0660 and, when given, apid's group,
 * and hands each connection to `server`. The socket is Deno's, not node:net's: node:net closes
 * a Unix socket's descriptor twice in Deno 2.9.3 (platform/unix_stream).
 */
async function listenOnSocket(
  server: Http2Server,
  socketPath: string,
  socketGroup: number | undefined,
): Promise<UnixStreamListener> {
  await Deno.mkdir(dirname(socketPath), { recursive: true, mode: 0o750 });
  await removeStaleSocket(socketPath);
  const listener = listenUnixStream(socketPath, (stream) => server.emit("connection", stream));
  await Deno.chmod(socketPath, 0o660);
  if (socketGroup !== undefined) await Deno.chown(socketPath, null, socketGroup);
  return listener;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function removeStaleSocket(path: string): Promise<void> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isSocket) {
      throw new Deno.errors.AlreadyExists(`Cannot bind API socket "${path}": not a socket`);
    }
    await Deno.remove(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}
