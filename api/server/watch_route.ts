/**
 * Watch served straight on machined's internal HTTP/2 server, beside the
 * Connect handler: a Connect server stream costs each stream about 37 KiB of
 * heap (a chain of a dozen async generators, promises and closures) and each
 * message a pass through all of them plus its own protobuf encoding, which
 * with 1 000 watchers made machined the bottleneck (docs/decisions.md, "Cheap
 * watches"). Here a stream is a cursor on the shared log (watch_fanout.ts) and
 * a loop that writes each event's gRPC frame, encoded once for every stream,
 * waiting for `drain` when the send gate holds it back.
 *
 * It speaks the same gRPC as the Connect handler, and takes only the calls it
 * can answer exactly as that would: uncompressed gRPC from a caller with a
 * forwarded identity that is not a maintenance caller. Everything else
 * (Connect, gRPC-Web, compression, no identity, maintenance) goes to the
 * Connect handler, which refuses or serves it as before.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  DeadlineExceededError,
  InvalidArgumentError,
  ResourceExhaustedError,
} from "../errors/mod.ts";
import { MachineService, WatchRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { authorize, type CallerIdentity, identityFromHeaders } from "../auth/mod.ts";
import type { ResourceSpecs } from "../../resources/mod.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";
import { toConnectError } from "./errors.ts";
import { watchSelection } from "./machine_service.ts";
import type { WatchFanout } from "./watch_fanout.ts";

/** The HTTP/2 path of MachineService/Watch. */
export const WATCH_PATH = `/${MachineService.typeName}/Watch`;

/** Options of {@link createWatchRoute}. */
export interface WatchRouteOptions {
  readonly fanout: WatchFanout<ResourceSpecs>;
  /** Bound on the request message. */
  readonly readMaxBytes: number;
  /** Bound on each response message. */
  readonly writeMaxBytes: number;
  /** Where the call is counted, as the Connect handler's interceptor counts it. */
  readonly registry?: MetricsRegistry;
}

/** Takes a request it serves (true), or leaves it to the Connect handler (false). */
export type WatchRoute = (req: Http2ServerRequest, res: Http2ServerResponse) => boolean;

/** The direct Watch route; see the module doc. */
export function createWatchRoute(o: WatchRouteOptions): WatchRoute {
  const metrics = o.registry ? callMetrics(o.registry) : undefined;
  return (req, res) => {
    if (req.method !== "POST" || req.url !== WATCH_PATH) return false;
    if (!/^application\/grpc(\+proto)?(;|$)/.test(header(req, "content-type") ?? "")) return false;
    const encoding = header(req, "grpc-encoding");
    if (encoding !== undefined && encoding !== "identity") return false;
    const caller = identityFromHeaders((name) => header(req, name));
    if (!caller || caller.maintenance) return false;
    metrics?.opened();
    serve(o, caller, req, res).then(
      (code) => metrics?.closed(code),
      () => metrics?.closed(Code.Internal),
    );
    return true;
  };
}

/** Serves one call; resolves to its gRPC code. */
async function serve(
  o: WatchRouteOptions,
  caller: CallerIdentity,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): Promise<Code | 0> {
  const ended = new AbortController();
  const state = { closed: false };
  res.once("close", () => {
    state.closed = true;
    ended.abort();
  });
  req.on("error", () => {}); // a peer gone mid-request is seen as `close`
  let deadline: ReturnType<typeof setTimeout> | undefined;
  res.writeHead(200, { "content-type": "application/grpc+proto" });
  try {
    authorize(caller.role, MachineService.typeName, "Watch");
    const timeoutMs = parseTimeout(header(req, "grpc-timeout"));
    if (timeoutMs !== undefined) {
      deadline = setTimeout(() => ended.abort(deadlineExceeded()), timeoutMs);
    }
    const request = decodeWatchRequest(await readMessage(req, o.readMaxBytes));
    const { type, namespace, id } = watchSelection(request);
    const watch = o.fanout.open(type, { namespace, id, signal: ended.signal });
    try {
      for await (const event of watch) {
        const frame = o.fanout.frame(event, caller.role);
        if (frame.byteLength - 5 > o.writeMaxBytes) {
          throw new ResourceExhaustedError(
            `message size ${
              frame.byteLength - 5
            } is larger than configured writeMaxBytes ${o.writeMaxBytes}`,
            { context: { method: "Watch", writeMaxBytes: o.writeMaxBytes } },
          );
        }
        if (!res.write(frame) && !ended.signal.aborted) await drained(res, ended.signal);
      }
    } finally {
      watch.close();
    }
    const reason = ended.signal.reason;
    return finish(res, state.closed, reason instanceof DeadlineExceededError ? reason : undefined);
  } catch (e) {
    return finish(res, state.closed, e);
  } finally {
    clearTimeout(deadline);
  }
}

/**
 * The request message, or InvalidArgument: an undecodable body is the
 * caller's mistake, as Connect's routes answer it (apid/decode_errors.ts).
 */
function decodeWatchRequest(bytes: Uint8Array) {
  try {
    return fromBinary(WatchRequestSchema, bytes);
  } catch (e) {
    throw new InvalidArgumentError(
      `parse binary: ${e instanceof Error ? e.message : String(e)}`,
      { context: { method: "Watch" }, cause: e },
    );
  }
}

/** Ends the response with the call's status in the trailers (nothing to write once it closed). */
function finish(res: Http2ServerResponse, closed: boolean, error: unknown): Code | 0 {
  const mapped = error === undefined ? undefined : toConnectError(error);
  const code = mapped?.code ?? 0;
  if (closed) return code === 0 ? Code.Canceled : code;
  const trailers: Record<string, string> = { "grpc-status": String(code) };
  if (mapped) trailers["grpc-message"] = encodeURIComponent(mapped.rawMessage);
  res.addTrailers(trailers);
  res.end();
  return code;
}

/**
 * The request's one length-prefixed message, read to the end of the request.
 * @throws ResourceExhaustedError past `maxBytes`, InvalidArgumentError when malformed.
 */
export async function readMessage(req: Http2ServerRequest, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes + 5) {
      throw new ResourceExhaustedError(
        `message size is larger than configured readMaxBytes ${maxBytes}`,
        { context: { readMaxBytes: maxBytes } },
      );
    }
    chunks.push(chunk);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) body.set(c, (at += c.byteLength) - c.byteLength);
  if (size < 5) {
    throw new InvalidArgumentError("protocol error: missing request message");
  }
  const length = new DataView(body.buffer).getUint32(1);
  if ((body[0] & 1) !== 0) {
    throw new InvalidArgumentError("protocol error: compressed message without grpc-encoding");
  }
  if (5 + length !== size) {
    throw new InvalidArgumentError(
      `protocol error: promised ${length} bytes in the request message, got ${size - 5}`,
      { context: { promised: length, got: size - 5 } },
    );
  }
  return body.subarray(5);
}

/** A gRPC `grpc-timeout` value in milliseconds (e.g. `500m`, `3S`); undefined when absent. */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) {
    throw new InvalidArgumentError(`protocol error: invalid grpc timeout value: ${value}`, {
      context: { value },
    });
  }
  const unit = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[m[2] as "H"];
  return Number(m[1]) * unit;
}

function deadlineExceeded(): DeadlineExceededError {
  return new DeadlineExceededError("the operation timed out");
}

/** Resolves when the response can take more, or the call ends (closed, or its deadline). */
function drained(res: Http2ServerResponse, ended: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      ended.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    ended.addEventListener("abort", done, { once: true });
  });
}

/** A request header's (first) value. */
export function header(req: Http2ServerRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The same `machined_api_*` families the Connect interceptor records (api_metrics.ts). */
function callMetrics(registry: MetricsRegistry) {
  const requests = registry.counter(
    "machined_api_requests_total",
    "API calls served, by method and gRPC code",
  );
  const streams = registry.gauge(
    "machined_api_streams_open",
    "Server streams (Watch, Events, Logs, Dmesg) open now, by method",
  );
  return {
    opened: () => streams.add({ method: "Watch" }, 1),
    closed: (code: Code | 0) => {
      streams.add({ method: "Watch" }, -1);
      requests.inc({ method: "Watch", code: code === 0 ? "OK" : Code[code] });
    },
  };
}
