/**
 * Rules that span several fields: unique service ids and interface names,
 * known and acyclic `depends_on`, the reserved `containerd` and `machined`
 * ids, one probe per health check, route families, unique addresses, unique
 * trusted roots (trusted_roots_checks.ts), a firewall that keeps the API open
 * to an admin subnet (firewall_checks.ts).
 *
 * They run on the raw parsed YAML, not on the schema's output, so they are
 * reported together with schema errors elsewhere in the file. Each rule only
 * looks at values that are well-formed and leaves malformed ones to the
 * schema.
 *
 * @module
 */
import { formatPath, type PathSegment } from "./config_error.ts";
import { checkFirewall } from "./firewall_checks.ts";
import { encryptionIssues } from "./encryption_checks.ts";
import { formatIp, parseCidr, parseIp } from "../ip/mod.ts";
import { MAX_REPORTED_ERRORS } from "./limits.ts";
import { parseDuration } from "./schema/primitives.ts";
import { BUILTIN_SERVICE_IDS, RESERVED_SERVICE_IDS, SERVICE_ID } from "./schema/services.ts";
import { cycleText, findCycles, type ServiceNode } from "./service_cycles.ts";
import { checkLinks, linkEntries } from "./link_checks.ts";
import { suggest } from "./suggest.ts";
import { checkTrustedRoots } from "./trusted_roots_checks.ts";
import { checkWireguard } from "./wireguard_checks.ts";
import type { Target } from "./yaml_locator.ts";
import { list, type Obj, obj, str } from "./raw_values.ts";

/** A cross-field problem, before it is given a position. */
export interface SemanticIssue {
  segments: PathSegment[];
  message: string;
  hint?: string;
  target?: Target;
}

/** Every cross-field problem in a raw config value. */
export function semanticChecks(raw: unknown): SemanticIssue[] {
  const machine = obj(obj(raw)?.machine);
  if (!machine) return [];
  const network = obj(machine.network);
  return [
    ...checkServices(machine),
    ...checkNetwork(network),
    ...checkLinks(network),
    ...checkWireguard(network),
    ...checkTrustedRoots(machine.trusted_roots),
    ...checkSeccompNames(machine),
    ...checkFirewall(machine),
    ...encryptionIssues(machine),
  ];
}

function checkServices(machine: Obj): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const base: PathSegment[] = ["machine", "services"];
  const containerdOff = obj(obj(machine.runtime)?.containerd)?.enabled === false;
  const services = list(machine.services);
  const byId = serviceIds(services, base, issues);
  checkDependsOn(services, byId, containerdOff, base, issues);
  reportCycles(byId, base, issues);
  return issues;
}

/**
 * The services by id, each well-formed id once; a reserved or duplicate id is reported
 * and left out.
 */
function serviceIds(
  services: unknown[],
  base: PathSegment[],
  issues: SemanticIssue[],
): Map<string, ServiceNode> {
  const byId = new Map<string, ServiceNode>();
  services.forEach((entry, index) => {
    const id = str(obj(entry)?.id);
    if (id === undefined || !SERVICE_ID.test(id)) return;
    if ((BUILTIN_SERVICE_IDS as readonly string[]).includes(id)) {
      issues.push({
        segments: [...base, index, "id"],
        message: `service id ${JSON.stringify(id)} is reserved for the built-in ${id}`,
        hint: `choose another id; to run after it, write depends_on: [${id}]`,
      });
      return;
    }
    if ((RESERVED_SERVICE_IDS as readonly string[]).includes(id)) {
      issues.push({
        segments: [...base, index, "id"],
        message: `service id ${JSON.stringify(id)} is reserved for machined's own log`,
        hint: "choose another id; `machinectl logs machined` shows machined itself",
      });
      return;
    }
    const first = byId.get(id);
    if (first) {
      issues.push({
        segments: [...base, index, "id"],
        message: `duplicate service id ${JSON.stringify(id)}`,
        hint: `first defined at machine.services[${first.index}]`,
      });
      return;
    }
    byId.set(id, { id, index, deps: [] });
  });
  return byId;
}

/**
 * Each service's `depends_on` (known ids, containerd enabled when named) and health check;
 * the known dependencies are recorded in `byId` for the cycle search.
 */
function checkDependsOn(
  services: unknown[],
  byId: Map<string, ServiceNode>,
  containerdOff: boolean,
  base: PathSegment[],
  issues: SemanticIssue[],
): void {
  let suggested = 0;
  services.forEach((entry, index) => {
    const service = obj(entry);
    const self = str(service?.id);
    const node = self !== undefined ? byId.get(self) : undefined;
    list(service?.depends_on).forEach((dep, at) => {
      if (typeof dep !== "string" || !SERVICE_ID.test(dep)) return;
      const where = [...base, index, "depends_on", at];
      if ((BUILTIN_SERVICE_IDS as readonly string[]).includes(dep)) {
        if (dep === "containerd" && containerdOff) {
          issues.push({
            segments: where,
            message: 'depends on "containerd", which is disabled',
            hint: "machine.runtime.containerd.enabled is false",
          });
        }
        return;
      }
      if (!byId.has(dep)) {
        // Only reported errors get a suggestion: each one scans every id.
        const near = suggested++ < MAX_REPORTED_ERRORS
          ? suggest(dep, [...byId.keys(), ...BUILTIN_SERVICE_IDS])
          : undefined;
        issues.push({
          segments: where,
          message: `depends on unknown service ${JSON.stringify(dep)}`,
          hint: near ? `did you mean ${JSON.stringify(near)}?` : undefined,
        });
        return;
      }
      if (node && node.index === index) node.deps.push({ id: dep, at });
    });
    checkHealth(obj(service?.health), [...base, index, "health"], issues);
  });
}

/** One issue per dependency cycle, at the dependency that closes it. */
function reportCycles(
  byId: Map<string, ServiceNode>,
  base: PathSegment[],
  issues: SemanticIssue[],
): void {
  for (const cycle of findCycles(byId)) {
    const [start, next] = cycle;
    const node = byId.get(start)!;
    const at = node.deps.find((d) => d.id === next)!.at;
    issues.push({
      segments: [...base, node.index, "depends_on", at],
      message: cycle.length === 2
        ? `service ${JSON.stringify(start)} depends on itself`
        : `dependency cycle: ${cycleText(cycle)}`,
    });
  }
}

function checkHealth(health: Obj | undefined, at: PathSegment[], issues: SemanticIssue[]): void {
  if (!health) return;
  const probes = ["exec", "tcp", "http"].filter((k) => health[k] !== undefined);
  if (probes.length === 0) {
    issues.push({
      segments: at,
      message: "health check has no probe",
      hint: "set exactly one of exec, tcp, http",
    });
  } else if (probes.length > 1) {
    issues.push({
      segments: [...at, probes[1]],
      message: `health check has both ${probes[0]} and ${probes[1]}`,
      hint: "set exactly one of exec, tcp, http",
      target: "key",
    });
  }
  const interval = parseDuration(str(health.interval) ?? "5s");
  const timeout = parseDuration(str(health.timeout) ?? "2s");
  if (interval !== undefined && timeout !== undefined && timeout > interval) {
    issues.push({
      segments: [...at, health.timeout !== undefined ? "timeout" : "interval"],
      message: `timeout (${str(health.timeout) ?? "2s"}) is longer than interval (${
        str(health.interval) ?? "5s"
      })`,
      hint: "a probe must finish before the next one starts",
    });
  }
}

function checkNetwork(network: Obj | undefined): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const names = new Map<string, number>();
  const addresses = new Map<string, PathSegment[]>();
  for (const { key, index: i, value: iface } of linkEntries(network)) {
    const base: PathSegment[] = ["machine", "network", key];
    const name = str(iface.name);
    if (key === "interfaces" && name !== undefined) {
      const first = names.get(name);
      if (first !== undefined) {
        issues.push({
          segments: [...base, i, "name"],
          message: `duplicate interface ${JSON.stringify(name)}`,
          hint: `first configured at machine.network.interfaces[${first}]; merge the two entries`,
        });
      } else names.set(name, i);
    }
    list(iface.addresses).forEach((text, k) => {
      const cidr = typeof text === "string" ? parseCidr(text) : undefined;
      if (!cidr) return;
      const key = formatIp(cidr);
      const first = addresses.get(key);
      if (first) {
        issues.push({
          segments: [...base, i, "addresses", k],
          message: `address ${key} is assigned twice`,
          hint: `also at ${formatPath(first)}`,
        });
      } else addresses.set(key, [...base, i, "addresses", k]);
    });
    list(iface.routes).forEach((r, k) => checkRoute(obj(r), [...base, i, "routes", k], issues));
  }
  return issues;
}

function checkRoute(route: Obj | undefined, at: PathSegment[], issues: SemanticIssue[]): void {
  const to = str(route?.to);
  const viaText = str(route?.via);
  const via = viaText !== undefined ? parseIp(viaText) : undefined;
  if (to === "default") {
    if (route?.via === undefined) {
      issues.push({
        segments: [...at, "to"],
        message: 'route to "default" without via is ambiguous',
        hint: 'write "0.0.0.0/0" or "::/0", or add a via',
      });
    }
    return;
  }
  const dest = to !== undefined ? parseCidr(to) : undefined;
  if (dest && via && dest.family !== via.family) {
    issues.push({
      segments: [...at, "via"],
      message: `gateway ${viaText} is IPv${via.family} but destination ${to} is IPv${dest.family}`,
      hint: "a route's via must be of the same family as its to",
    });
  }
}

/** Each service's `sandbox.seccomp` is built in or names a `machine.seccomp_profiles` entry. */
function checkSeccompNames(machine: Obj): SemanticIssue[] {
  const profiles = Object.keys(obj(machine.seccomp_profiles) ?? {});
  const issues: SemanticIssue[] = [];
  list(machine.services).forEach((s, index) => {
    const name = str(obj(obj(s)?.sandbox)?.seccomp);
    if (name === undefined || name === "default" || name === "unconfined") return;
    if (profiles.includes(name)) return;
    const near = suggest(name, [...profiles, "default", "unconfined"]);
    issues.push({
      segments: ["machine", "services", index, "sandbox", "seccomp"],
      message: `seccomp profile ${JSON.stringify(name)} is not defined in machine.seccomp_profiles`,
      hint: near ? `did you mean "${near}"?` : "define it under machine.seccomp_profiles",
    });
  });
  return issues;
}
