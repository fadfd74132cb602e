/**
 * RouteSpec: a route machined wants in the main table, from the machine config
 * or a DHCP lease. The route apply controller adds it and, on teardown,
 * deletes only routes machined added.
 */
import type { ResourceDescriptor } from "../descriptor.ts";
import type { NetworkOrigin } from "./address_spec.ts";

/** Type name. */
export const ROUTE_SPEC = "RouteSpec";

/** One wanted route; the id is {@link routeSpecId}. */
export interface RouteSpecSpec {
  readonly link: string;
  readonly family: "inet" | "inet6";
  /** Canonical destination network; `0.0.0.0` or `::` with length 0 for a default route. */
  readonly dst: string;
  readonly dstLen: number;
  /** Absent for an on-link route. */
  readonly gateway?: string;
  readonly metric: number;
  readonly origin: NetworkOrigin;
}

/**
 * The id: what the kernel keys a route on (family, destination, metric) plus
 * the link, so two links may carry the same prefix at different metrics.
 */
export function routeSpecId(r: Pick<RouteSpecSpec, "link" | "dst" | "dstLen" | "metric">): string {
  return `${r.link}/${r.dst}/${r.dstLen}/${r.metric}`;
}

export const routeSpecDescriptor: ResourceDescriptor<typeof ROUTE_SPEC, RouteSpecSpec> = {
  type: ROUTE_SPEC,
  namespace: "network",
  aliases: ["routespec", "routespecs"],
  description: "Wanted routes, from the machine config and DHCP",
  columns: [
    { header: "LINK", value: (s) => s.link },
    { header: "DESTINATION", value: (s) => `${s.dst}/${s.dstLen}` },
    { header: "GATEWAY", value: (s) => s.gateway ?? "" },
    { header: "METRIC", value: (s) => String(s.metric) },
    { header: "ORIGIN", value: (s) => s.origin },
  ],
};
