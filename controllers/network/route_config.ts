/**
 * RouteConfigController: static routes from the machine config plus a default
 * route via the router of each bound DHCP lease → RouteSpec. A configured
 * route with the same destination and metric wins over the leased one.
 * Inputs: MachineConfig, DhcpLease. Output: RouteSpec.
 * @module
 */
import type { DhcpLeaseSpec, MachineController } from "../../resources/mod.ts";
import { ROUTE_SPEC, routeSpecId, type RouteSpecSpec } from "../../resources/mod.ts";
import { configuredLinks, type MachineConfig } from "../../config/mod.ts";
import { parseCidr } from "../../ip/mod.ts";
import { canonicalIp, formatIp } from "../../platform/network/mod.ts";
import {
  boundLeases,
  CONFIG_INPUT,
  LEASE_INPUT,
  networkConfig,
  specController,
} from "./spec_transform.ts";

/** Metric of routes learnt by DHCP (the config's default metric too). */
export const DHCP_ROUTE_METRIC = 1024;

/** Builds the controller. */
export function routeConfigController(): MachineController {
  return specController({
    name: "network.RouteConfigController",
    inputs: [CONFIG_INPUT, LEASE_INPUT],
    output: ROUTE_SPEC,
    build(ctx) {
      const config = networkConfig(ctx);
      return routeSpecs(config, boundLeases(ctx)).map((spec) => ({ id: routeSpecId(spec), spec }));
    },
  });
}

/** Pure: wanted routes for a config and the bound leases. */
export function routeSpecs(
  config: MachineConfig,
  leases: readonly DhcpLeaseSpec[],
): RouteSpecSpec[] {
  const out: RouteSpecSpec[] = [];
  for (const i of configuredLinks(config.machine.network)) {
    for (const r of i.routes) {
      const cidr = parseCidr(r.to);
      if (!cidr) continue; // the config schema rejects these
      out.push({
        link: i.name,
        family: cidr.family === 4 ? "inet" : "inet6",
        dst: formatIp(cidr.bytes),
        dstLen: cidr.prefix,
        ...(r.via === undefined ? {} : { gateway: canonicalIp(r.via) }),
        metric: r.metric,
        origin: "static",
      });
    }
  }
  // The kernel keys routes on family, table, destination and metric: one of each only.
  const taken = (r: RouteSpecSpec) =>
    out.some((o) =>
      o.family === r.family && o.dst === r.dst && o.dstLen === r.dstLen && o.metric === r.metric
    );
  for (const l of leases) {
    const router = l.routers?.[0];
    if (!router) continue;
    const r: RouteSpecSpec = {
      link: l.link,
      family: "inet",
      dst: "0.0.0.0",
      dstLen: 0,
      gateway: router,
      metric: DHCP_ROUTE_METRIC,
      origin: "dhcp",
    };
    if (!taken(r)) out.push(r);
  }
  return out;
}
