/**
 * A server stream whose deadline (`grpc-timeout`, `connect-timeout-ms`) passes
 * must end with DeadlineExceeded, not OK: the handlers (Watch, Events, Logs,
 * Dmesg) stop quietly when their signal aborts, and connect-node then reports
 * success. The Deno apid used to end such a stream itself; machined-edge
 * forwards the header untouched, so machined says it.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";

/** Ends an aborted server stream with the abort's reason (DeadlineExceeded, Canceled). */
export const streamDeadlineInterceptor: Interceptor = (next) => async (req) => {
  const res = await next(req);
  if (!res.stream) return res;
  const source = res.message;
  const signal = req.signal;
  return {
    ...res,
    message: (async function* () {
      yield* source;
      if (signal.aborted) throw ConnectError.from(signal.reason);
    })(),
  };
};
