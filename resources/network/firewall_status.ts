/**
 * FirewallStatus: the ingress firewall in force, as firewall.FirewallController last applied
 * and checked it (table `inet machined`). Subnets and port numbers only, no secret: every role
 * may read it. docs/network.md ("Firewall").
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const FIREWALL_STATUS = "FirewallStatus";
/** The single FirewallStatus's id. */
export const FIREWALL_STATUS_ID = "firewall";

/** One rule in force. */
export interface FirewallRuleStatus {
  readonly name: string;
  readonly protocol: "tcp" | "udp";
  /** `"443"` or `"8000-8100"`. */
  readonly ports: readonly string[];
  /** Allowed sources; empty means every source. */
  readonly sources: readonly string[];
  readonly except: readonly string[];
}

export interface FirewallStatusSpec {
  /** A firewall is configured (`machine.network.firewall`); false: machined's table is removed. */
  readonly enabled: boolean;
  /** What new connections to ports no rule names get. */
  readonly defaultAction: "accept" | "block";
  readonly rules: readonly FirewallRuleStatus[];
  /** The API port is open to these whatever the rules say. */
  readonly adminSubnets: readonly string[];
  readonly apiPort: number;
  /** SHA-256 (hex) of the nft transaction last applied; "" when none was. */
  readonly appliedHash: string;
  /** The table read back matches what was applied, at the last check. */
  readonly inForce: boolean;
  /** How often the table was re-applied because something else changed or deleted it. */
  readonly driftReapplies: number;
  /** Why the last apply or check failed; "" when it did not. */
  readonly error: string;
}

export const firewallStatusDescriptor: ResourceDescriptor<
  typeof FIREWALL_STATUS,
  FirewallStatusSpec
> = {
  type: FIREWALL_STATUS,
  namespace: "network",
  aliases: ["firewallstatus", "firewallstatuses", "firewall", "fw"],
  description: "The ingress firewall in force: default, rules, admin subnets, drift re-applies",
  columns: [
    { header: "ENABLED", value: (s) => String(s.enabled) },
    { header: "DEFAULT", value: (s) => s.defaultAction },
    { header: "RULES", value: (s) => s.rules.map((r) => r.name).join(",") },
    { header: "ADMIN", value: (s) => s.adminSubnets.join(",") },
    { header: "IN FORCE", value: (s) => String(s.inForce) },
    { header: "REAPPLIES", value: (s) => String(s.driftReapplies) },
    { header: "HASH", value: (s) => s.appliedHash.slice(0, 12) },
    { header: "ERROR", value: (s) => s.error },
  ],
};
