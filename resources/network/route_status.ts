/** RouteStatus: a route of the main (or another non-local) table, as the kernel reports it. */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const ROUTE_STATUS = "RouteStatus";

/** One route; the id is `table/dst/dstLen/link/metric`. */
export interface RouteStatusSpec {
  readonly family: "inet" | "inet6";
  /** Canonical destination network (`0.0.0.0`/`::` with length 0 for default). */
  readonly dst: string;
  readonly dstLen: number;
  readonly gateway: string;
  /** Output link name; empty when the route has none. */
  readonly link: string;
  readonly metric: number;
  readonly table: number;
  /** `kernel`, `boot`, `static`, `dhcp` or the numeric protocol. */
  readonly protocol: string;
  readonly scope: string;
}

export const routeStatusDescriptor: ResourceDescriptor<typeof ROUTE_STATUS, RouteStatusSpec> = {
  type: ROUTE_STATUS,
  namespace: "network",
  aliases: ["routestatuses", "route", "routes"],
  description: "Routes as the kernel reports them (every table but local)",
  columns: [
    { header: "DESTINATION", value: (s) => `${s.dst}/${s.dstLen}` },
    { header: "GATEWAY", value: (s) => s.gateway },
    { header: "LINK", value: (s) => s.link },
    { header: "METRIC", value: (s) => String(s.metric) },
    { header: "PROTOCOL", value: (s) => s.protocol },
  ],
};
