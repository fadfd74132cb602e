/**
 * `GET /metrics` on machined's internal server: Prometheus's scrape, which the
 * edge forwards with the verified caller's identity headers like any call (and
 * then appends its own counters). Authorized as the Metrics RPC; maintenance
 * callers are refused, as api/auth/maintenance.ts refuses Metrics.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { MachineService } from "../gen/machined/v1/machine_pb.ts";
import { authorize, identityFromHeaders } from "../auth/mod.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";

/** The path Prometheus scrapes. */
export const METRICS_PATH = "/metrics";
/** The content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * A request handler answering `/metrics` (returns true) and leaving any other
 * path to the RPC handler (returns false).
 */
export function createInternalMetricsRoute(
  metrics: { render(): Promise<string> } | undefined,
  /** Where the scrape is counted as a Metrics call (`machined_api_requests_total`). */
  registry?: MetricsRegistry,
): (req: Http2ServerRequest, res: Http2ServerResponse) => boolean {
  const requests = registry?.counter(
    "machined_api_requests_total",
    "API calls served, by method and gRPC code",
  );
  const count = (code: string) => requests?.inc({ method: "Metrics", code });
  return (req, res) => {
    if ((req.url ?? "").split("?")[0] !== METRICS_PATH) return false;
    serve(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "metrics failed\n");
    });
    return true;
  };

  async function serve(req: Http2ServerRequest, res: Http2ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      return reply(res, 405, `${req.method} ${METRICS_PATH}: only GET\n`);
    }
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const caller = identityFromHeaders(header);
    if (!caller) {
      count("Unauthenticated");
      return reply(res, 401, "the call carries no verified caller\n");
    }
    if (caller.maintenance) {
      count("PermissionDenied");
      return reply(
        res,
        403,
        "Metrics needs a client certificate (the node is in maintenance mode)\n",
      );
    }
    try {
      authorize(caller.role, MachineService.typeName, "Metrics");
    } catch (e) {
      count("PermissionDenied");
      return reply(res, 403, `${e instanceof Error ? e.message : e}\n`);
    }
    if (!metrics) {
      count("Unimplemented");
      return reply(res, 503, "this node keeps no metrics\n");
    }
    const text = await metrics.render();
    count("OK");
    reply(res, 200, text, METRICS_CONTENT_TYPE);
  }
}

function reply(
  res: Http2ServerResponse,
  status: number,
  body: string,
  type = "text/plain; charset=utf-8",
) {
  res.writeHead(status, { "content-type": type });
  res.end(body);
}
