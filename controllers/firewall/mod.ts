/**
 * The firewall domain: the ingress firewall from `machine.network.firewall`, compiled to one
 * nftables table machined owns (`inet machined`), applied atomically, kept applied against
 * drift, and published as FirewallStatus. docs/network.md ("Firewall").
 *
 * @example
 * ```ts
 * import { firewallControllers } from "./controllers/firewall/mod.ts";
 * import { FakeFirewallBackend } from "./platform/firewall/mod.ts";
 * const controllers = firewallControllers({ backend: new FakeFirewallBackend() });
 * console.log(controllers.map((c) => c.name));
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { firewallController, type FirewallDeps } from "./firewall_controller.ts";

/** The firewall domain's controllers. */
export function firewallControllers(deps: FirewallDeps): MachineController[] {
  return [firewallController(deps)];
}

export {
  FIREWALL_RESYNC_MS,
  FirewallController,
  firewallController,
  type FirewallDeps,
  firewallStatus,
} from "./firewall_controller.ts";
export {
  compileFirewall,
  FIREWALL_MODULES,
  FIREWALL_TABLE,
  inputChain,
  networks,
  portSet,
} from "./compile.ts";
export { type FirewallIntent, firewallIntent, type FirewallRuleIntent } from "./intent.ts";
