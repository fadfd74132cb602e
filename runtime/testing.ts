/**
 * Test helpers for anything built on the store: wait on a watch for a condition
 * (with a timeout) instead of sleeping and polling.
 */
import type { Catalog, ResourceOf, TypeName } from "./resource.ts";
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
