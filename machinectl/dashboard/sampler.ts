/**
 * CPU and memory for the dashboard: no stream exists for them, so the Stats
 * and Memory RPCs are polled every 2 s. A poll the node refuses (an older
 * node without them: Unimplemented) is shown as the reason and polling goes
 * on; a poll that fails because the node is gone ends the session, which is
 * also how a node that vanished without closing its connection is noticed.
 */
import type { MemoryResponse, StatsResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { describeError } from "../errors.ts";
import { sleep } from "./sources.ts";
import type { Sample } from "./state.ts";
import { type Dispatch, type MachineApi, refused } from "./streams.ts";

/** How often CPU and memory are read. */
export const SAMPLE_EVERY_MS = 2_000;
/** A poll slower than this means the node is gone. */
export const POLL_TIMEOUT_MS = 5_000;

/**
 * A sampler for followNode: polls until `signal` aborts (then throws, as a
 * session's parts end by throwing), or throws the failure that shows the
 * node is gone.
 */
export function createSampler(
  dispatch: Dispatch,
  everyMs = SAMPLE_EVERY_MS,
  timeoutMs = POLL_TIMEOUT_MS,
) {
  return async (api: MachineApi, signal: AbortSignal): Promise<never> => {
    while (true) {
      try {
        const [stats, memory] = await Promise.all([
          api.stats({}, { signal, timeoutMs }),
          api.memory({}, { signal, timeoutMs }),
        ]);
        dispatch({ type: "sample", sample: sampleOf(stats, memory) });
      } catch (e) {
        if (!refused(e) || signal.aborted) throw e;
        dispatch({ type: "sampleError", error: describeError(e) });
      }
      await sleep(everyMs, signal);
      if (signal.aborted) throw new Error("sampling stopped");
    }
  };
}

/** The dashboard's reading from one Stats and one Memory answer. */
export function sampleOf(stats: StatsResponse, memory: MemoryResponse): Sample {
  const busy = stats.cpuTotal?.usagePercent;
  const total = Number(memory.meminfo?.totalBytes ?? 0n);
  const available = Number(memory.meminfo?.availableBytes ?? 0n);
  return {
    cpu: busy === undefined ? null : busy / 100,
    cores: stats.cpus.length,
    perCore: stats.cpus.flatMap((c) => c.usagePercent === undefined ? [] : [c.usagePercent / 100]),
    load1: stats.load?.load1 ?? 0,
    memUsedBytes: Math.max(0, total - available),
    memTotalBytes: total,
  };
}
