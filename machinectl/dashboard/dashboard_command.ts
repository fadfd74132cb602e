/**
 * `machinectl dashboard`: one live screen of a node (hostname, stage and
 * readiness, CPU and memory over time, services, recent events, machined's
 * log) that follows the node through a reboot. `q` or Ctrl-C quits.
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { renderDashboard } from "./render.ts";
import { createSampler, SAMPLE_EVERY_MS } from "./sampler.ts";
import { followNode } from "./sources.ts";
import { type DashboardAction, initialState, reduce } from "./state.ts";
import { openTerminal, type Terminal } from "./terminal.ts";

/** Repaints at most this often however fast the streams go. */
const PAINT_EVERY_MS = 100;

/** The `dashboard` command; it needs a terminal (exit 2 otherwise) and gives it back as it was. */
export const dashboardCommand = defineCommand({
  name: "dashboard",
  summary: "A live screen of the node: stage, CPU, memory, services, events, logs; q quits",
  connects: true,
  flags: {},
  async run({ flags, signal: outer }) {
    // A missing or broken client config is an error before the screen is taken.
    const probe = await connectToNode(flags);
    const endpoint = probe.endpoint;
    probe.close();
    let term: Terminal;
    try {
      term = openTerminal();
    } catch (e) {
      throw new CliError(`dashboard: ${(e as Error).message}`, 2);
    }
    try {
      await runScreen(term, endpoint, () => connectToNode(flags), outer);
    } finally {
      term.restore();
    }
    return 0;
  },
});

/** Drives the screen until a quit key, SIGTERM or `outer` aborts. */
async function runScreen(
  term: Terminal,
  endpoint: string,
  connect: () => ReturnType<typeof connectToNode>,
  outer?: AbortSignal,
): Promise<void> {
  let state = initialState(endpoint, Date.now());
  let pending: ReturnType<typeof setTimeout> | undefined;
  const paint = () => {
    pending = undefined;
    term.paint(renderDashboard(state, term.size()));
  };
  const dispatch = (a: DashboardAction) => {
    state = reduce(state, a);
    pending ??= setTimeout(paint, PAINT_EVERY_MS);
  };
  const abort = new AbortController();
  const stop = () => abort.abort();
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  outer?.addEventListener("abort", stop, { once: true });
  term.onResize(paint);
  paint();
  const clock = setInterval(() => dispatch({ type: "tick", now: Date.now() }), 1_000);
  const loop = followNode({
    connect,
    dispatch,
    signal: abort.signal,
    sampler: createSampler(dispatch, SAMPLE_EVERY_MS),
  });
  try {
    await Promise.race([
      term.quit,
      new Promise((r) => abort.signal.addEventListener("abort", r, { once: true })),
    ]);
  } finally {
    abort.abort();
    clearInterval(clock);
    clearTimeout(pending);
    Deno.removeSignalListener("SIGTERM", stop);
    Deno.removeSignalListener("SIGINT", stop);
    outer?.removeEventListener("abort", stop);
    await loop;
  }
}
