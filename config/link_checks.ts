/**
 * Cross-field rules of bonds, VLANs and bridges, on the raw parsed YAML like
 * the rest of `semantic_checks.ts`:
 * - link names are unique across interfaces, bonds, VLANs and bridges, and a
 *   VLAN's default name `<parent>.<id>` fits the kernel's 15 bytes;
 * - a port belongs to one master, a master is not its own port, and a bridge
 *   is never a port (the kernel answers ELOOP); a bond may be a bridge port;
 * - a port carries no addresses, DHCP or routes (its master does);
 * - a VLAN is never on a port of a bond or bridge, and never a port of the
 *   master it is tagged on (a Talos failure mode: a VLAN enslaved to its own
 *   bond);
 * - `lacp_rate` and `xmit_hash_policy` only with mode 802.3ad; one VLAN per
 *   parent and id.
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import type { SemanticIssue } from "./semantic_checks.ts";
import { list, type Obj, obj, str } from "./raw_values.ts";

/** A link-like entry of `machine.network`, with where it is. */
export interface LinkEntry {
  key: "interfaces" | "bonds" | "vlans" | "bridges" | "wireguard";
  index: number;
  /** Its link name (a VLAN's default name filled in); undefined when malformed. */
  name?: string;
  value: Obj;
}

const base = (key: string, index: number): PathSegment[] => ["machine", "network", key, index];

/** Every link-like entry, in the order the config lists the five sections. */
export function linkEntries(network: Obj | undefined): LinkEntry[] {
  const out: LinkEntry[] = [];
  for (const key of ["interfaces", "bonds", "vlans", "bridges", "wireguard"] as const) {
    list(network?.[key]).forEach((entry, index) => {
      const value = obj(entry) ?? {};
      let name = str(value.name);
      if (key === "vlans" && name === undefined) {
        const parent = str(value.parent), id = value.id;
        if (parent !== undefined && typeof id === "number") name = `${parent}.${id}`;
      }
      out.push({ key, index, name, value });
    });
  }
  return out;
}

/** Every problem with bonds, VLANs and bridges in `machine.network`. */
export function checkLinks(network: Obj | undefined): SemanticIssue[] {
  const issues: SemanticIssue[] = [];
  const entries = linkEntries(network);
  checkNames(entries, issues);
  const masterOf = checkPorts(entries, issues);
  for (const e of entries) {
    const master = e.name === undefined ? undefined : masterOf.get(e.name);
    if (master) checkPortIsBare(e, master, issues);
    if (e.key === "vlans") checkVlan(e, masterOf, issues);
    if (e.key === "bonds") checkBondOptions(e, issues);
  }
  return issues;
}

function checkNames(entries: LinkEntry[], issues: SemanticIssue[]): void {
  const first = new Map<string, LinkEntry>();
  const vlanKeys = new Map<string, LinkEntry>();
  for (const e of entries) {
    if (e.name === undefined) continue;
    if (
      e.key === "vlans" && e.value.name === undefined &&
      new TextEncoder().encode(e.name).length > 15
    ) {
      issues.push({
        segments: [...base(e.key, e.index), "id"],
        message: `the default VLAN name ${JSON.stringify(e.name)} is longer than 15 bytes`,
        hint: "set name: to a shorter one",
      });
    }
    if (e.key === "vlans") {
      const k = `${str(e.value.parent)}/${e.value.id}`;
      const dup = vlanKeys.get(k);
      if (dup) {
        issues.push({
          segments: [...base(e.key, e.index), "id"],
          message: `VLAN ${e.value.id} on ${JSON.stringify(str(e.value.parent))} is defined twice`,
          hint: `also at machine.network.vlans[${dup.index}]`,
        });
      } else vlanKeys.set(k, e);
    }
    const prev = first.get(e.name);
    if (prev && !(prev.key === "interfaces" && e.key === "interfaces")) {
      // Duplicate interfaces are reported by semantic_checks.ts.
      issues.push({
        segments: [...base(e.key, e.index), e.value.name === undefined ? "id" : "name"],
        message: `link ${JSON.stringify(e.name)} is defined twice`,
        hint: `also at machine.network.${prev.key}[${prev.index}]`,
      });
    } else if (!prev) first.set(e.name, e);
  }
}

/** A port's selector as a key: its name, or `mac:<address>`. */
function portKey(p: unknown): string | undefined {
  if (typeof p === "string") return p;
  const mac = str(obj(p)?.mac);
  return mac === undefined ? undefined : `mac:${mac.toLowerCase()}`;
}

/** Ports in one master each; returns port name → its master's entry. */
function checkPorts(entries: LinkEntry[], issues: SemanticIssue[]): Map<string, LinkEntry> {
  const masterOf = new Map<string, LinkEntry>();
  const byName = new Map(entries.map((e) => [e.name, e]));
  for (const m of entries.filter((e) => e.key === "bonds" || e.key === "bridges")) {
    list(m.value.ports).forEach((p, k) => {
      const key = portKey(p);
      if (key === undefined) return;
      const at = [...base(m.key, m.index), "ports", k];
      const other = masterOf.get(key);
      const port = byName.get(key);
      if (other) {
        issues.push({
          segments: at,
          message: `port ${JSON.stringify(key)} is already a port of ${JSON.stringify(other.name)}`,
          hint: "a link can have one master only",
        });
        return;
      }
      if (key === m.name) {
        issues.push({ segments: at, message: `${JSON.stringify(key)} cannot be its own port` });
        return;
      }
      if (port?.key === "bridges" || (port?.key === "bonds" && m.key === "bonds")) {
        issues.push({
          segments: at,
          message: `${port.key === "bridges" ? "bridge" : "bond"} ${
            JSON.stringify(key)
          } cannot be a port of ${m.key === "bonds" ? "a bond" : "a bridge"}`,
          hint: "a bond may be a bridge port; nothing else nests",
        });
        return;
      }
      if (port?.key === "vlans" && str(port.value.parent) === m.name) {
        issues.push({
          segments: at,
          message: `VLAN ${JSON.stringify(key)} is tagged on ${
            JSON.stringify(m.name)
          } and cannot be its port`,
          hint: "a VLAN rides on top of its bond or bridge; list the physical links as ports",
        });
        return;
      }
      masterOf.set(key, m);
    });
  }
  return masterOf;
}

function checkPortIsBare(e: LinkEntry, master: LinkEntry, issues: SemanticIssue[]): void {
  const at = base(e.key, e.index);
  const why = `it is a port of ${JSON.stringify(master.name)}`;
  const hint = `configure addresses, DHCP and routes on ${JSON.stringify(master.name)}`;
  if (e.value.dhcp === true) {
    issues.push({
      segments: [...at, "dhcp"],
      message: `DHCP on ${JSON.stringify(e.name)}: ${why}`,
      hint,
    });
  }
  const ipv6 = e.value.ipv6;
  if (
    typeof ipv6 === "object" && ipv6 !== null && (ipv6 as Record<string, unknown>).dhcp === true
  ) {
    issues.push({
      segments: [...at, "ipv6", "dhcp"],
      message: `DHCPv6 on ${JSON.stringify(e.name)}: ${why}`,
      hint,
    });
  }
  for (const key of ["addresses", "routes"]) {
    if (list(e.value[key]).length > 0) {
      issues.push({
        segments: [...at, key],
        message: `${key} on ${JSON.stringify(e.name)}: ${why}`,
        hint,
      });
    }
  }
}

function checkVlan(e: LinkEntry, masterOf: Map<string, LinkEntry>, issues: SemanticIssue[]): void {
  const parent = str(e.value.parent);
  const master = parent === undefined ? undefined : masterOf.get(parent);
  if (!master) return;
  issues.push({
    segments: [...base(e.key, e.index), "parent"],
    message: `VLAN parent ${JSON.stringify(parent)} is a port of ${JSON.stringify(master.name)}`,
    hint: `put the VLAN on ${
      JSON.stringify(master.name)
    }: traffic tagged on a port bypasses its master`,
  });
}

function checkBondOptions(e: LinkEntry, issues: SemanticIssue[]): void {
  if (e.value.mode === "802.3ad") return;
  for (const key of ["lacp_rate", "xmit_hash_policy"]) {
    if (e.value[key] === undefined) continue;
    issues.push({
      segments: [...base(e.key, e.index), key],
      message: `${key} applies to mode 802.3ad only`,
      hint: `remove it, or set mode: 802.3ad`,
      target: "key",
    });
  }
}
