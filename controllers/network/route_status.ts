/**
 * RouteStatusController: mirrors every route outside the local table into
 * RouteStatus, kept current by rtnetlink route events. No inputs. Output:
 * RouteStatus.
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { ROUTE_STATUS, type RouteStatusSpec } from "../../resources/mod.ts";
import {
  type LinkInfo,
  type NetworkBackend,
  PROTO,
  type RouteInfo,
  TABLE,
} from "../../platform/network/mod.ts";
import { kernelWatchController } from "./kernel_watch.ts";
import { scopeName } from "./address_status.ts";

/** Builds the controller. */
export function routeStatusController(
  deps: { backend: NetworkBackend; windowMs?: number },
): MachineController {
  return kernelWatchController({
    name: "network.RouteStatusController",
    output: ROUTE_STATUS,
    groups: ["link", "ipv4-route", "ipv6-route"],
    backend: deps.backend,
    windowMs: deps.windowMs,
    async read(b) {
      const links = await b.listLinks();
      const byId = new Map<string, RouteStatusSpec>();
      for (const r of await b.listRoutes()) {
        if (r.table === TABLE.LOCAL) continue;
        const spec = routeStatus(r, links);
        byId.set(routeStatusId(spec), spec);
      }
      return [...byId].map(([id, spec]) => ({ id, spec }));
    },
  });
}

/** The id of a RouteStatus: `table/dst/dstLen/link/metric`. */
export function routeStatusId(s: RouteStatusSpec): string {
  return `${s.table}/${s.dst}/${s.dstLen}/${s.link || "-"}/${s.metric}`;
}

/** Pure: the status of one route, with its link's name. */
export function routeStatus(r: RouteInfo, links: readonly LinkInfo[]): RouteStatusSpec {
  const protocols: Record<number, string> = {
    [PROTO.UNSPEC]: "unspec",
    [PROTO.KERNEL]: "kernel",
    [PROTO.BOOT]: "boot",
    [PROTO.STATIC]: "static",
    [PROTO.DHCP]: "dhcp",
  };
  return {
    family: r.family,
    dst: r.dst ?? (r.family === "inet" ? "0.0.0.0" : "::"),
    dstLen: r.dstLen,
    gateway: r.gateway ?? "",
    link: r.oif === undefined ? "" : links.find((l) => l.index === r.oif)?.name ?? `if${r.oif}`,
    metric: r.metric ?? 0,
    table: r.table,
    protocol: protocols[r.protocol] ?? String(r.protocol),
    scope: scopeName(r.scope),
  };
}
