/**
 * The connection loop that lets the dashboard follow a node through a reboot:
 * it opens a session, and when the session's streams end or fail it shows
 * "reconnecting…" and tries again with backoff (250 ms doubling to 5 s),
 * until the dashboard quits. A session that got as far as its streams resets
 * the backoff.
 */
import { describeError } from "../errors.ts";
import type { NodeConnection } from "../connection.ts";
import { type Dispatch, type MachineApi, runSession } from "./streams.ts";

/** What {@link followNode} needs; tests pass fakes. */
export interface FollowOptions {
  /** Opens a connection (machinectl's connectToNode with the command's flags). */
  readonly connect: () => Promise<Pick<NodeConnection, "client" | "endpoint" | "close">>;
  readonly dispatch: Dispatch;
  /** Ends the loop (the dashboard quits). */
  readonly signal: AbortSignal;
  /** Polls CPU and memory until aborted; throws when the node is gone. */
  readonly sampler: (api: MachineApi, signal: AbortSignal) => Promise<never>;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Delay before attempt `n` (1-based): 250 ms doubling, at most 5 s. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000, 250 * 2 ** Math.max(0, attempt - 1));
}

/** Runs sessions until `signal` aborts. Never throws. */
export async function followNode(o: FollowOptions): Promise<void> {
  const now = o.now ?? Date.now;
  let attempt = 0;
  while (!o.signal.aborted) {
    let conn: Awaited<ReturnType<FollowOptions["connect"]>> | undefined;
    let error: string;
    let live = false;
    try {
      conn = await o.connect();
      const endpoint = conn.endpoint;
      await runSession(
        conn.client,
        (a) => {
          // The first action of a session is its MachineStatus: the node answers.
          if (!live) {
            live = true;
            attempt = 0;
            o.dispatch({ type: "connected", endpoint, at: now() });
          }
          o.dispatch(a);
        },
        o.signal,
        o.sampler,
      );
      error = "the node closed the streams";
    } catch (e) {
      error = describeError(e, conn?.endpoint);
    } finally {
      conn?.close();
    }
    if (o.signal.aborted) break;
    attempt++;
    const delay = backoffMs(attempt);
    o.dispatch({ type: "disconnected", attempt, error, retryAt: now() + delay });
    await sleep(delay, o.signal);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
