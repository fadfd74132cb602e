/**
 * Counts API calls where they pass, on machined's internal server (every call
 * from apid arrives here, after apid's RBAC): calls by method and gRPC code,
 * their duration, and the streams (Watch, Events, Logs, Dmesg) open now.
 */
import { Code, type Interceptor } from "@connectrpc/connect";
import type { MetricsRegistry } from "../../metrics/mod.ts";
import { codeOf } from "./errors.ts";

/** An interceptor recording `machined_api_*` metrics into `registry`. */
export function createApiMetricsInterceptor(registry: MetricsRegistry): Interceptor {
  const requests = registry.counter(
    "machined_api_requests_total",
    "API calls served, by method and gRPC code",
  );
  const seconds = registry.histogram(
    "machined_api_request_duration_seconds",
    "Time to answer a unary API call, by method",
  );
  const streams = registry.gauge(
    "machined_api_streams_open",
    "Server streams (Watch, Events, Logs, Dmesg) open now, by method",
  );
  const done = (method: string, e?: unknown) =>
    requests.inc({ method, code: e === undefined ? "OK" : Code[codeOf(e)] });
  return (next) => async (req) => {
    const method = req.method.name;
    const started = performance.now();
    let res;
    try {
      res = await next(req);
    } catch (e) {
      done(method, e);
      throw e;
    }
    if (!res.stream) {
      seconds.observe({ method }, (performance.now() - started) / 1000);
      done(method);
      return res;
    }
    streams.add({ method }, 1);
    const source = res.message;
    return {
      ...res,
      message: (async function* () {
        let error: unknown;
        try {
          yield* source;
        } catch (e) {
          error = e;
          throw e;
        } finally {
          streams.add({ method }, -1);
          done(method, error);
        }
      })(),
    };
  };
}
