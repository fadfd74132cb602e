/**
 * What happens when the node's volumes come up: STATE mounted → the config is
 * persisted there (or loaded from there); EPHEMERAL mounted at /var → services
 * held by the start gate (node/var_gate.ts) may start, and their logs are also
 * written to /var/log. Follows MountStatus through a store watch. A hook that
 * fails is reported (a `failed` event and an error log) and retried with
 * exponential backoff until it succeeds, the volume is unmounted, or the
 * follower stops.
 */
import type { MountStatusSpec } from "../resources/mod.ts";
import { isStateMounted, MOUNT_STATUS } from "../resources/mod.ts";
import { backoffDelay, type BackoffPolicy, type Clock, systemClock } from "../runtime/mod.ts";
import type { Supervisor } from "../supervisor/mod.ts";
import type { ConfigKeeper } from "../config/keeper/mod.ts";
import type { Machined } from "../core/mod.ts";

/** Retries of a failed post-mount hook: 1 s doubling to 1 min. */
export const VOLUME_HOOK_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000, factor: 2 };

/** What the hooks act on, and how they retry. */
export interface VolumeHookDeps {
  config: Pick<ConfigKeeper, "stateMounted">;
  supervisor: Pick<Supervisor, "recheck" | "setLogDirectory">;
  /** Run when EPHEMERAL is mounted, before the held services are let go (PCR 11's closing). */
  beforeServices?: () => Promise<void>;
  /** @default systemClock */
  clock?: Clock;
  /** @default VOLUME_HOOK_BACKOFF */
  backoff?: BackoffPolicy;
}

/** Starts following MountStatus; returns a function that stops it (and any retry). */
export function followVolumes(
  machined: Pick<Machined, "store" | "events" | "logger">,
  deps: VolumeHookDeps,
): () => void {
  const abort = new AbortController();
  /** Volumes whose hook ran or is running (retrying), by MountStatus id. */
  const handled = new Map<string, AbortController>();
  (async () => {
    for await (const ev of machined.store.watch(MOUNT_STATUS, { signal: abort.signal })) {
      if (ev.kind === "bootstrapped" || ev.kind === "overflow") continue;
      const id = ev.resource.metadata.id;
      const spec = ev.resource.spec;
      const ready = ev.kind !== "destroyed" && spec.mounted && spec.phase === "ready";
      if (!ready) {
        // Unmounted (or gone): stop retrying; a later mount runs the hook again.
        handled.get(id)?.abort();
        handled.delete(id);
        continue;
      }
      if (handled.has(id)) continue;
      const retry = new AbortController();
      handled.set(id, retry);
      void runWithRetry(machined, deps, spec, AbortSignal.any([abort.signal, retry.signal]));
    }
  })();
  return () => abort.abort();
}

/** Runs the hook of `spec` until it succeeds or `signal` aborts, backing off between tries. */
async function runWithRetry(
  machined: Pick<Machined, "events" | "logger">,
  deps: VolumeHookDeps,
  spec: MountStatusSpec,
  signal: AbortSignal,
): Promise<void> {
  const clock = deps.clock ?? systemClock;
  const subject = `volume ${spec.volume}`;
  for (let failures = 0; !signal.aborted;) {
    try {
      await afterMount(deps, spec);
      machined.events.emit("task", subject, "ready", `mounted at ${spec.target}`);
      return;
    } catch (e) {
      failures++;
      const delay = backoffDelay(failures, deps.backoff ?? VOLUME_HOOK_BACKOFF);
      const message = e instanceof Error ? e.message : String(e);
      machined.events.emit("task", subject, "failed", `after mounting ${spec.target}: ${message}`, {
        attempt: String(failures),
        retryInMs: String(delay),
      });
      machined.logger.error("volumes", `after mounting ${spec.target}`, {
        error: e,
        attempt: failures,
        retryInMs: delay,
      });
      try {
        await clock.sleep(delay, signal);
      } catch {
        return; // stopped or unmounted
      }
    }
  }
}

async function afterMount(deps: VolumeHookDeps, spec: MountStatusSpec): Promise<void> {
  if (isStateMounted(spec)) await deps.config.stateMounted(spec.target);
  else if (spec.volume === "EPHEMERAL") {
    await deps.beforeServices?.();
    deps.supervisor.recheck(); // services held until /var is mounted may start
    await Deno.mkdir(`${spec.target}/log`, { recursive: true });
    await deps.supervisor.setLogDirectory(`${spec.target}/log`);
  }
}
