/**
 * `GET /metrics` on the API port, for Prometheus: the same mutual TLS and the
 * same RBAC table as every RPC (the caller needs what `Metrics` needs,
 * `os:reader`), then machined's exposition fetched over the Unix socket with
 * the verified caller in headers, followed by apid's own edge metrics
 * (connections). Plain HTTP, because a scraper speaks nothing else.
 */
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from "node:http2";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { identityToHeaders } from "../auth/identity.ts";
import { authorize } from "../auth/rbac.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";
import type { PeerVerifier } from "./peer_identity.ts";

/** The path Prometheus scrapes. */
export const METRICS_PATH = "/metrics";

/** The content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Request = Http2ServerRequest | IncomingMessage;
type Response = Http2ServerResponse | ServerResponse;

/** Options of {@link createMetricsRoute}. */
export interface MetricsRouteOptions {
  readonly verifier: PeerVerifier;
  /** machined's API socket transport. */
  readonly upstream: Transport;
  /** apid's own metrics, appended to machined's. */
  readonly edge: MetricsRegistry;
}

/**
 * A request handler that answers `/metrics` and returns true, or returns
 * false for every other path (the Connect handler's).
 */
export function createMetricsRoute(
  o: MetricsRouteOptions,
): (req: Request, res: Response) => boolean {
  const client = createClient(MachineService, o.upstream);
  return (req, res) => {
    if ((req.url ?? "").split("?")[0] !== METRICS_PATH) return false;
    serve(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "metrics failed\n");
    });
    return true;
  };

  async function serve(req: Request, res: Response): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return reply(res, 405, `${req.method} ${METRICS_PATH}: only GET\n`);
    }
    const session = (req as { stream?: { session?: Http2Session } }).stream?.session;
    let headers: Headers;
    try {
      const caller = await o.verifier.identify(session, req.socket as TLSSocket);
      authorize(caller.role, MachineService.typeName, "Metrics");
      headers = new Headers();
      identityToHeaders(caller, headers);
    } catch (e) {
      const code = e instanceof ConnectError ? e.code : Code.Unauthenticated;
      const status = code === Code.PermissionDenied ? 403 : 401;
      return reply(res, status, `${e instanceof ConnectError ? e.rawMessage : e}\n`);
    }
    let text: string;
    try {
      text = (await client.metrics({}, { headers, timeoutMs: 10_000 })).text;
    } catch (e) {
      const why = e instanceof ConnectError ? e.rawMessage : String(e);
      return reply(res, 503, `machined did not answer Metrics: ${why}\n`);
    }
    reply(res, 200, text + (await o.edge.render()), METRICS_CONTENT_TYPE);
  }
}

function reply(res: Response, status: number, body: string, type = "text/plain; charset=utf-8") {
  (res as ServerResponse).writeHead(status, { "content-type": type });
  (res as ServerResponse).end(body);
}
