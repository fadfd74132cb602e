/**
 * The shape of the status controllers that mirror kernel state (links,
 * addresses, routes): subscribe to rtnetlink events first, then list and
 * publish everything, then keep the cycle open and re-list after every burst
 * of events until a window ends or the runtime stops. The runtime has no
 * external wake-up, so the cycle itself waits on the event socket; after the
 * window it returns and requeues at once, which also bounds how long a lost
 * event could go unnoticed.
 * @module
 */
import type { MachineController, ResourceSpecs, ResourceType } from "../../resources/registry.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type {
  EventGroup,
  NetworkBackend,
  NetworkSubscription,
} from "../../platform/network/backend.ts";
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
  /** @default {@link DEFAULT_WATCH_WINDOW_MS} */
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
    async reconcile(ctx) {
      const deadline = Date.now() + (def.windowMs ?? DEFAULT_WATCH_WINDOW_MS);
      ctx.signal.addEventListener("abort", close, { once: true });
      try {
        sub ??= def.backend.subscribe(def.groups);
        await publish(ctx);
        while (!ctx.signal.aborted && Date.now() < deadline) {
          const s = sub;
          if (!s) break;
          try {
            const first = await s.nextEvent(deadline - Date.now());
            if (!first || ctx.signal.aborted) continue;
            while (await s.nextEvent(BURST_MS)) { /* coalesce the burst */ }
          } catch (e) {
            if (!hasErrno(e, "ENOBUFS")) throw e;
            // Events were lost: start over with a fresh socket and a full list.
            close();
            sub = def.backend.subscribe(def.groups);
          }
          if (!ctx.signal.aborted) await publish(ctx);
        }
      } finally {
        ctx.signal.removeEventListener("abort", close);
      }
      if (!ctx.signal.aborted) ctx.requeueAfter(0);
    },
  };
}
