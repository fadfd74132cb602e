/**
 * Get and List served straight on machined's internal HTTP/2 server, beside
 * the Connect handler, as Watch is (watch_route.ts). Through Connect's node
 * adapter each unary answer left machined in three socket writes (headers,
 * message, trailers: 9 004 `sendto` for 3 000 Gets under strace), each its
 * own pass through Deno's HTTP/2 session and socket, and the largest self
 * time in a profile of 16 Gets in flight; plus per call an AbortController
 * aborted at the end (a DOMException with its stack), three Headers and a
 * chain of async iterables. Here the answer is written in one tick (headers,
 * the message, trailers), which Deno's session sends together.
 *
 * It takes only the calls it can answer exactly as Connect would:
 * uncompressed gRPC from a forwarded identity that is not a maintenance
 * caller, for the read-only methods in {@link UNARY_FAST_METHODS} (no audit
 * line to write). The handler is the same service implementation; RBAC,
 * message limits, error codes (errors.ts) and the `machined_api_*` metrics
 * are kept. Everything else goes to the Connect handler.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { type DescMethodUnary, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  createContextValues,
  createHandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { authorize, callerKey, identityFromHeaders } from "../auth/mod.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";
import { InvalidArgumentError, ResourceExhaustedError } from "../errors/mod.ts";
import { toConnectError } from "./errors.ts";
import { grpcFrame } from "./watch_fanout.ts";
import { header, parseTimeout, readMessage, type WatchRoute } from "./watch_route.ts";

/** The methods this route serves (local names): read-only, unaudited, and the hot ones. */
export const UNARY_FAST_METHODS = ["get", "list"] as const;

/** Options of {@link createUnaryRoute}. */
export interface UnaryRouteOptions {
  /** The service implementation Connect serves too. */
  readonly impl: ServiceImpl<typeof MachineService>;
  readonly readMaxBytes: number;
  readonly writeMaxBytes: number;
  /** Where the call is counted, as the Connect handler's interceptor counts it. */
  readonly registry?: MetricsRegistry;
}

type Method = DescMethodUnary;
type Impl = (req: unknown, ctx: ReturnType<typeof createHandlerContext>) => unknown;

/** The direct unary route; see the module doc. Same contract as the Watch route. */
export function createUnaryRoute(o: UnaryRouteOptions): WatchRoute {
  const methods = new Map<string, { method: Method; impl: Impl }>();
  for (const name of UNARY_FAST_METHODS) {
    const method: Method = MachineService.method[name];
    const fn = (o.impl as Record<string, Impl>)[method.localName];
    methods.set(`/${MachineService.typeName}/${method.name}`, { method, impl: fn.bind(o.impl) });
  }
  const metrics = o.registry ? unaryMetrics(o.registry) : undefined;
  return (req, res) => {
    if (req.method !== "POST") return false;
    const m = methods.get(req.url);
    if (!m) return false;
    if (!/^application\/grpc(\+proto)?(;|$)/.test(header(req, "content-type") ?? "")) return false;
    const encoding = header(req, "grpc-encoding");
    if (encoding !== undefined && encoding !== "identity") return false;
    const caller = identityFromHeaders((name) => header(req, name));
    if (!caller || caller.maintenance) return false;
    const started = performance.now();
    serve(o, m.method, m.impl, caller, req, res).then(
      (code) => metrics?.done(m.method.name, code, started),
      () => metrics?.done(m.method.name, Code.Internal, started),
    );
    return true;
  };
}

/** Serves one call; resolves to its gRPC code. */
async function serve(
  o: UnaryRouteOptions,
  method: Method,
  impl: Impl,
  caller: NonNullable<ReturnType<typeof identityFromHeaders>>,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): Promise<Code | 0> {
  req.on("error", () => {}); // a peer gone mid-request is seen as `close`
  let frame: Uint8Array;
  try {
    authorize(caller.role, MachineService.typeName, method.name);
    // Get and List answer at once; a malformed timeout is still refused as Connect refuses it.
    parseTimeout(header(req, "grpc-timeout"));
    const request = decode(method, await readMessage(req, o.readMaxBytes));
    const ctx = createHandlerContext({
      service: MachineService,
      method,
      protocolName: "grpc",
      requestMethod: "POST",
      url: req.url,
      contextValues: createContextValues().set(callerKey, caller),
    });
    const answer = await impl(request, ctx);
    frame = grpcFrame(toBinary(method.output, answer as never));
    if (frame.byteLength - 5 > o.writeMaxBytes) {
      throw new ResourceExhaustedError(
        `message size ${
          frame.byteLength - 5
        } is larger than configured writeMaxBytes ${o.writeMaxBytes}`,
        { context: { method: method.name, writeMaxBytes: o.writeMaxBytes } },
      );
    }
  } catch (e) {
    return answerError(res, e);
  }
  if (res.closed || res.destroyed) return Code.Canceled;
  res.writeHead(200, { "content-type": "application/grpc+proto" });
  res.write(frame);
  res.addTrailers({ "grpc-status": "0" });
  res.end();
  return 0;
}

/** An undecodable body is InvalidArgument, as Connect's routes answer it (apid/decode_errors.ts). */
function decode(method: Method, bytes: Uint8Array) {
  try {
    return fromBinary(method.input, bytes);
  } catch (e) {
    throw new InvalidArgumentError(
      `parse binary: ${e instanceof Error ? e.message : String(e)}`,
      { context: { method: method.name }, cause: e },
    );
  }
}

/**
 * An answer with no message and the error's code and message in trailers (its
 * code is mapped in errors.ts). Not trailers-only: Deno's server ends a
 * header-only response with an empty DATA frame, which gRPC clients (grpc-go,
 * behind machined-edge) read as a stream closed without trailers.
 */
function answerError(res: Http2ServerResponse, e: unknown): Code {
  const error = toConnectError(e);
  if (res.closed || res.destroyed) return error.code;
  res.writeHead(200, { "content-type": "application/grpc+proto" });
  res.addTrailers({
    "grpc-status": String(error.code),
    "grpc-message": encodeURIComponent(error.rawMessage),
  });
  res.end();
  return error.code;
}

/** The same `machined_api_*` families the Connect interceptor records (api_metrics.ts). */
function unaryMetrics(registry: MetricsRegistry) {
  const requests = registry.counter(
    "machined_api_requests_total",
    "API calls served, by method and gRPC code",
  );
  const seconds = registry.histogram(
    "machined_api_request_duration_seconds",
    "Time to answer a unary API call, by method",
  );
  return {
    done(method: string, code: Code | 0, started: number) {
      if (code === 0) seconds.observe({ method }, (performance.now() - started) / 1000);
      requests.inc({ method, code: code === 0 ? "OK" : Code[code] });
    },
  };
}
