/**
 * Test helpers for anything built on the store: wait on a watch for a condition
 * (with a timeout) instead of sleeping and polling.
 */
import type { Catalog, ResourceOf, TypeName } from "./resource.ts";
import type { ControllerStats } from "./runtime.ts";
import type { Store } from "./store.ts";

/**
 * Resolves with the first resource of `type` for which `predicate` holds, as seen
 * through a watch (so it also sees resources that already exist).
 * @throws Error after `timeoutMs`.
 */
export async function waitForResource<M extends Catalog, K extends TypeName<M>>(
  store: Store<M>,
  type: K,
  predicate: (r: ResourceOf<M, K>) => boolean,
  timeoutMs = 5000,
): Promise<ResourceOf<M, K>> {
  const abort = new AbortController();
  const watch = store.watch(type, { signal: abort.signal });
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    for await (const ev of watch) {
      if ((ev.kind === "created" || ev.kind === "updated") && predicate(ev.resource)) {
        return ev.resource;
      }
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for a matching ${type}`);
  } finally {
    clearTimeout(timer);
    watch.close();
  }
}

/** Resolves once no resource of `type` matches `predicate` (e.g. after garbage collection). */
export async function waitForAbsence<M extends Catalog, K extends TypeName<M>>(
  store: Store<M>,
  type: K,
  predicate: (r: ResourceOf<M, K>) => boolean,
  timeoutMs = 5000,
): Promise<void> {
  const abort = new AbortController();
  const watch = store.watch(type, { signal: abort.signal });
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    let bootstrapped = false;
    for await (const ev of watch) {
      if (ev.kind === "bootstrapped") bootstrapped = true;
      if (bootstrapped && !store.list(type).some(predicate)) return;
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for ${type} to go away`);
  } finally {
    clearTimeout(timer);
    watch.close();
  }
}

/**
 * Collects controller stats as the runtime publishes them and lets a test await
 * a condition on them. Pass `onStats` to the runtime's options.
 */
export function statsRecorder() {
  const seen: ControllerStats[] = [];
  let waiters: Array<
    { pred: (s: ControllerStats) => boolean; resolve: (s: ControllerStats) => void }
  > = [];
  return {
    seen,
    onStats(s: ControllerStats) {
      seen.push(s);
      const ready = waiters.filter((w) => w.pred(s));
      waiters = waiters.filter((w) => !w.pred(s));
      for (const w of ready) w.resolve(s);
    },
    /** Resolves with the first stats, from now on, that satisfy `pred`. */
    next(pred: (s: ControllerStats) => boolean, timeoutMs = 5000): Promise<ControllerStats> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("Timed out waiting for stats")), timeoutMs);
        waiters.push({
          pred,
          resolve: (s) => {
            clearTimeout(timer);
            resolve(s);
          },
        });
      });
    },
  };
}
