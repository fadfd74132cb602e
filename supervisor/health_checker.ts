/**
 * Runs a service's readiness probe on its interval and turns pass/fail runs
 * into a healthy flag: `successThreshold` passes in a row make it healthy,
 * `failureThreshold` failures in a row make it unhealthy, and failures within
 * `startPeriodMs` of the start do not count. A probe that throws or hangs is a
 * failure (bounded by `timeoutMs`); nothing a probe does escapes the checker.
 */
import type { Clock } from "../runtime/mod.ts";
import type { HealthSpec } from "../resources/mod.ts";
import type { ProbeContext, Prober } from "./probes.ts";

/** A change of the healthy flag, with the last probe's outcome. */
export interface HealthChange {
  readonly healthy: boolean;
  /** Empty on a pass, else why the probe failed. */
  readonly message: string;
  /** `failureThreshold` counted failures in a row (after the start period). */
  readonly failing: boolean;
}

/** Options of {@link runHealthChecker}. */
export interface HealthCheckerOptions {
  readonly spec: HealthSpec;
  readonly prober: Prober;
  readonly clock: Clock;
  readonly processSpec: ProbeContext["processSpec"];
  /** Ends the checker. */
  readonly signal: AbortSignal;
  /** Called when the flag changes (and on every failure while unhealthy, for the message). */
  readonly onChange: (change: HealthChange) => void;
}

/** Probes until `signal` aborts; never throws. */
export async function runHealthChecker(o: HealthCheckerOptions): Promise<void> {
  const started = o.clock.monotonic();
  let healthy = false;
  let passes = 0;
  let failures = 0;
  while (!o.signal.aborted) {
    const error = await probeOnce(o);
    if (o.signal.aborted) return;
    if (error === undefined) {
      failures = 0;
      passes++;
      if (!healthy && passes >= o.spec.successThreshold) {
        healthy = true;
        o.onChange({ healthy, message: "", failing: false });
      }
    } else {
      passes = 0;
      const counts = o.clock.monotonic() - started >= o.spec.startPeriodMs;
      if (counts) failures++;
      if (healthy && failures >= o.spec.failureThreshold) healthy = false;
      if (!healthy) {
        o.onChange({ healthy, message: error, failing: failures >= o.spec.failureThreshold });
      }
    }
    try {
      const starting = !healthy && o.clock.monotonic() - started < o.spec.startPeriodMs;
      const interval = starting ? o.spec.startIntervalMs ?? o.spec.intervalMs : o.spec.intervalMs;
      await o.clock.sleep(interval, o.signal);
    } catch {
      return;
    }
  }
}

/** One probe bounded by the timeout; the failure message, or undefined on a pass. */
async function probeOnce(o: HealthCheckerOptions): Promise<string | undefined> {
  const abort = new AbortController();
  const onStop = () => abort.abort();
  o.signal.addEventListener("abort", onStop, { once: true });
  const timedOut = `probe timed out after ${o.spec.timeoutMs} ms`;
  try {
    // Raced rather than trusted: a probe that ignores its signal still cannot stall the checker.
    const probe = Promise.resolve()
      .then(() => o.prober(o.spec.probe, { signal: abort.signal, processSpec: o.processSpec }))
      .then(() => undefined, (e) => (e instanceof Error ? e.message : String(e)));
    const timeout = o.clock.sleep(o.spec.timeoutMs, abort.signal).then(() => timedOut, () => "");
    const result = await Promise.race([probe, timeout]);
    return result === "" ? timedOut : result;
  } finally {
    abort.abort();
    o.signal.removeEventListener("abort", onStop);
  }
}
