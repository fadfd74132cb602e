/**
 * The shape of the status controllers that mirror kernel state (links,
 * addresses, routes): the controller's `watch` subscribes to rtnetlink events
 * and wakes the runtime after every burst of events; each reconcile lists and
 * publishes everything. A periodic resync bounds how long a lost event could
 * go unnoticed.
 * @module
 */
import type { MachineController, ResourceSpecs, ResourceType } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type {
  EventGroup,
  NetworkBackend,
  NetworkSubscription,
} from "../../platform/network/mod.ts";
import { hasErrno } from "./apply_error.ts";
import { NETWORK_NAMESPACE, type Wanted } from "./spec_transform.ts";

/** How long one watching cycle lasts by default (ms, real time). */
export const DEFAULT_WATCH_WINDOW_MS = 60_000;
/** Events arriving this close together are handled with one re-list. */
const BURST_MS = 20;

/** Definition of a kernel status controller. */
export interface KernelWatchDef<K extends ResourceType> {
  name: string;
  output: K;
  groups: readonly EventGroup[];
  backend: NetworkBackend;
  /** Everything that should be published now, read from the backend. */
  read(backend: NetworkBackend): Promise<Wanted<K>[]>;
  /** Re-list this often (ms) even without events; 0 never. @default {@link DEFAULT_WATCH_WINDOW_MS} */
  windowMs?: number;
}

/** Builds a controller that mirrors what `read` returns, kept current by events. */
export function kernelWatchController<K extends ResourceType>(
  def: KernelWatchDef<K>,
): MachineController {
  let sub: NetworkSubscription | undefined;
  const close = () => {
    sub?.close();
    sub = undefined;
  };
  const publish = async (ctx: ReconcileContext<ResourceSpecs>) => {
    const wanted = await def.read(def.backend);
    const ids = new Set(wanted.map((w) => w.id));
    for (const w of wanted) {
      await ctx.apply({ type: def.output, namespace: NETWORK_NAMESPACE, id: w.id }, w.spec);
    }
    for (const r of ctx.list(def.output, { namespace: NETWORK_NAMESPACE })) {
      if (!ids.has(r.metadata.id)) ctx.remove(r.metadata);
    }
  };
  return {
    name: def.name,
    inputs: [],
    outputs: [{ type: def.output, kind: "exclusive" }],
    // A periodic re-list bounds how long a lost event goes unnoticed; 0 turns it off.
    resyncInterval: def.windowMs === 0 ? undefined : def.windowMs ?? DEFAULT_WATCH_WINDOW_MS,
    async watch(wake, signal) {
      signal.addEventListener("abort", close, { once: true });
      sub ??= def.backend.subscribe(def.groups);
      try {
        while (!signal.aborted) {
          const s = sub;
          if (!s) break;
          try {
            const first = await s.nextEvent(1_000);
            if (!first || signal.aborted) continue;
            while (await s.nextEvent(BURST_MS)) { /* coalesce the burst */ }
          } catch (e) {
            if (signal.aborted) break;
            if (!hasErrno(e, "ENOBUFS")) throw e;
            // Events were lost: start over with a fresh socket; the re-list below catches up.
            close();
            sub = def.backend.subscribe(def.groups);
          }
          wake();
        }
      } finally {
        // A failed socket is never reused: the runtime restarts the watch with a fresh one.
        close();
        signal.removeEventListener("abort", close);
      }
    },
    async reconcile(ctx) {
      await publish(ctx);
    },
  };
}
