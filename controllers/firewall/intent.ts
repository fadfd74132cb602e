/**
 * The firewall's intent: what the config asks for, in the compiler's terms, with the API port
 * resolved from `machine.api.listen`. Pure.
 * @module
 */
import { apiPortOf, type MachineConfig } from "../../config/mod.ts";

/** One rule as the compiler takes it. */
export interface FirewallRuleIntent {
  readonly name: string;
  readonly protocol: "tcp" | "udp";
  /** `"443"` or `"8000-8100"`. */
  readonly ports: readonly string[];
  /** Networks allowed; empty means every source. */
  readonly sources: readonly string[];
  /** Networks refused even when inside `sources`. */
  readonly except: readonly string[];
}

/** The whole ingress policy. */
export interface FirewallIntent {
  readonly default: "accept" | "block";
  readonly rules: readonly FirewallRuleIntent[];
  /** The API port is always open to these. */
  readonly adminSubnets: readonly string[];
  /** ICMP packets accepted per second. */
  readonly icmpRate: number;
  /** The API's TCP port (50000 unless `machine.api.listen` says otherwise). */
  readonly apiPort: number;
}

/**
 * The intent of a parsed config, or undefined when it has no `network.firewall`. Each WireGuard
 * interface's listen port is opened to every source (peers roam and sit behind NATs; WireGuard
 * answers nothing to a packet without a valid handshake) as rule `wireguard-<name>`, so the
 * firewall follows the interfaces and never drifts from them.
 */
export function firewallIntent(config: MachineConfig | undefined): FirewallIntent | undefined {
  const fw = config?.machine.network?.firewall;
  if (!fw || !config) return undefined;
  return {
    default: fw.default,
    rules: [
      ...fw.rules.map((r) => ({
        name: r.name,
        protocol: r.protocol,
        ports: r.ports,
        sources: r.sources,
        except: r.except,
      })),
      ...wireguardRules(config),
    ],
    adminSubnets: fw.admin_subnets,
    icmpRate: fw.icmp_rate,
    apiPort: apiPortOf(config.machine as unknown as Record<string, unknown>),
  };
}

/** A rule opening each WireGuard listen port (interfaces without one only dial out). */
export function wireguardRules(config: MachineConfig): FirewallRuleIntent[] {
  return (config.machine.network?.wireguard ?? []).flatMap((w) =>
    w.listen_port === undefined ? [] : [{
      name: `wireguard-${w.name}`,
      protocol: "udp" as const,
      ports: [String(w.listen_port)],
      sources: [],
      except: [],
    }]
  );
}
