/**
 * The firewall's cross-section rule: the API must stay reachable from at least one admin subnet.
 * A firewall in `block` mode, or one with a rule naming the API's port (from `machine.api.listen`),
 * could otherwise close the only way to repair the node remotely, so such a config is refused
 * unless `admin_subnets` lists at least one subnet (the compiler always opens the port to those).
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import { parseHostPort } from "../ip/mod.ts";
import { DEFAULT_API_LISTEN } from "./schema/api.ts";
import { parsePortRange } from "./schema/firewall.ts";
import { list, type Obj, obj } from "./raw_values.ts";
import type { SemanticIssue } from "./semantic_checks.ts";

/** A cross-field problem: the semantic checks' issue, without a target. */
export type FirewallIssue = SemanticIssue;

/** The API's TCP port from a raw `machine` mapping: its `api.listen`, else 50000. */
export function apiPortOf(machine: Obj | undefined): number {
  const listen = obj(machine?.api)?.listen;
  const parsed = typeof listen === "string" ? parseHostPort(listen) : undefined;
  return parsed?.port ?? parseHostPort(DEFAULT_API_LISTEN)!.port;
}

/** The issues of a raw `machine` mapping's firewall (none when it has no firewall). */
export function checkFirewall(machine: Obj | undefined): FirewallIssue[] {
  const fw = obj(obj(machine?.network)?.firewall);
  if (!fw || list(fw.admin_subnets).length > 0) return [];
  const port = apiPortOf(machine);
  const at: PathSegment[] = ["machine", "network", "firewall", "admin_subnets"];
  const hint = `list the subnets you manage the node from; port ${port} stays open to them`;
  if (fw.default === "block") {
    return [{
      segments: at,
      message: `a "block" firewall without admin_subnets would close the API (port ${port})`,
      hint,
    }];
  }
  const names = list(fw.rules).findIndex((r) =>
    obj(r)?.protocol === "tcp" && list(obj(r)?.ports).some((p) => {
      const range = parsePortRange(p);
      return range !== undefined && range[0] <= port && port <= range[1];
    })
  );
  if (names < 0) return [];
  return [{
    segments: at,
    message: `rule ${names} names the API port ${port} but no admin_subnets keep it open`,
    hint,
  }];
}
