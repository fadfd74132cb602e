/**
 * RouteSpecController: adds each RouteSpec's route to the main table, and on
 * teardown (or when a spec's gateway changes) deletes exactly the route it
 * added, matched by protocol too, so a route machined did not add is never
 * removed. A gateway that is not reachable yet (its address not applied) is
 * retried when addresses or routes change. Inputs: RouteSpec (strong, with a
 * finalizer), LinkStatus, AddressStatus, RouteStatus. No outputs.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  ADDRESS_STATUS,
  LINK_STATUS,
  ROUTE_SPEC,
  ROUTE_STATUS,
  type RouteSpecSpec,
} from "../../resources/mod.ts";
import { deepEqual, type ReconcileContext } from "../../runtime/mod.ts";
import {
  type LinkInfo,
  type NetworkBackend,
  PROTO,
  type RouteInfo,
  type RouteSpec as BackendRoute,
  TABLE,
} from "../../platform/network/mod.ts";
import { hasErrno, NetworkApplyError } from "./apply_error.ts";

/** Applies RouteSpecs through the network backend. */
export class RouteSpecController implements MachineController {
  readonly name = "network.RouteSpecController";
  readonly inputs = [
    { type: ROUTE_SPEC, kind: "strong" },
    { type: LINK_STATUS, kind: "weak" },
    { type: ADDRESS_STATUS, kind: "weak" },
    { type: ROUTE_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [] as const;
  readonly #backend: NetworkBackend;
  /** The request of every route this controller added, by RouteSpec id. */
  readonly #added = new Map<string, BackendRoute>();

  constructor(deps: { backend: NetworkBackend }) {
    this.#backend = deps.backend;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const links = new Map((await this.#backend.listLinks()).map((l) => [l.name, l]));
    let routes = await this.#backend.listRoutes();
    for (const r of ctx.list(ROUTE_SPEC)) {
      const id = r.metadata.id;
      const added = this.#added.get(id);
      if (r.metadata.phase === "tearingDown") {
        if (added) await this.#delete(added, r.spec);
        this.#added.delete(id);
        ctx.removeFinalizer(r.metadata);
        continue;
      }
      ctx.addFinalizer(r.metadata);
      const want = backendRoute(r.spec);
      if (added && !deepEqual(added, want)) {
        await this.#delete(added, r.spec); // changed in place (e.g. a new gateway)
        this.#added.delete(id);
        routes = await this.#backend.listRoutes();
      }
      const link = links.get(r.spec.link);
      if (!link || isPresent(r.spec, link, routes)) continue;
      if (await this.#add(want, r.spec, ctx)) this.#added.set(id, want);
    }
  }

  async #add(
    want: BackendRoute,
    spec: RouteSpecSpec,
    ctx: ReconcileContext<ResourceSpecs>,
  ): Promise<boolean> {
    try {
      await this.#backend.addRoute(want);
      return true;
    } catch (e) {
      if (hasErrno(e, "EEXIST", "ENODEV")) return false;
      if (hasErrno(e, "ENETUNREACH", "EHOSTUNREACH")) {
        ctx.log("gateway not reachable yet; waiting for addresses", { route: describe(spec) });
        return false;
      }
      throw new NetworkApplyError("add route", describe(spec), spec.link, { cause: e });
    }
  }

  async #delete(route: BackendRoute, spec: RouteSpecSpec): Promise<void> {
    try {
      await this.#backend.deleteRoute(route);
    } catch (e) {
      if (hasErrno(e, "ESRCH", "ENODEV")) return; // already gone (a link going down flushes routes)
      throw new NetworkApplyError("delete route", describe(spec), spec.link, { cause: e });
    }
  }
}

/** Pure: is a route with the spec's key, link and gateway in the main table? */
export function isPresent(spec: RouteSpecSpec, link: LinkInfo, routes: readonly RouteInfo[]) {
  return routes.some((r) =>
    r.table === TABLE.MAIN && r.family === spec.family && r.dstLen === spec.dstLen &&
    (r.dst ?? (spec.family === "inet" ? "0.0.0.0" : "::")) === spec.dst &&
    (r.metric ?? 0) === spec.metric && r.oif === link.index && r.gateway === spec.gateway
  );
}

/** Pure: the backend request for a spec (add and delete alike). */
export function backendRoute(spec: RouteSpecSpec): BackendRoute {
  const route: BackendRoute = {
    family: spec.family,
    dstLen: spec.dstLen,
    link: spec.link,
    metric: spec.metric,
    table: TABLE.MAIN,
    protocol: spec.origin === "dhcp" ? PROTO.DHCP : PROTO.STATIC,
  };
  if (spec.dstLen > 0) route.dst = spec.dst;
  if (spec.gateway !== undefined) route.gateway = spec.gateway;
  return route;
}

function describe(spec: RouteSpecSpec): string {
  return `${spec.dst}/${spec.dstLen}` + (spec.gateway ? ` via ${spec.gateway}` : "") +
    ` metric ${spec.metric}`;
}
