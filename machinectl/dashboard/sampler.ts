/**
 * CPU and memory for the dashboard: no stream exists for them, so they are
 * polled every 2 s. A poll that fails because the node is gone ends the
 * session (which is also how a node that vanished without closing its
 * connection is noticed).
 */
import type { Dispatch, MachineApi } from "./streams.ts";

/** How often CPU and memory are read. */
export const SAMPLE_EVERY_MS = 2_000;

/** A sampler for {@link followNode}: polls until aborted, throws when the node is gone. */
export function createSampler(dispatch: Dispatch, everyMs: number) {
  return async (api: MachineApi, signal: AbortSignal): Promise<never> => {
    while (true) {
      await api.version({}, { signal, timeoutMs: 10_000 });
      dispatch({ type: "sampleError", error: "this node has no Stats RPC" });
      await new Promise((r) => setTimeout(r, everyMs));
      if (signal.aborted) throw new Error("sampling stopped");
    }
  };
}
