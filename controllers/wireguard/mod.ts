/**
 * The WireGuard domain: keys and peers of the interfaces
 * `machine.network.wireguard` lists, and their status. The links themselves
 * are created by the network domain (LinkSpec kind `wireguard`); their
 * addresses, MTU and routes flow through it like any link's; the firewall
 * opens each listen port (controllers/firewall/intent.ts).
 *
 * @example
 * ```ts
 * import { wireguardControllers } from "./controllers/wireguard/mod.ts";
 * import { FakeWireguardBackend } from "./platform/wireguard/mod.ts";
 * const controllers = wireguardControllers({ backend: new FakeWireguardBackend(), secrets: () => undefined });
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { wireguardController, type WireguardDeps } from "./wireguard_controller.ts";

/** The WireGuard domain's controllers. */
export function wireguardControllers(deps: WireguardDeps): MachineController[] {
  return [wireguardController(deps)];
}

export {
  deviceSettings,
  inForce,
  WIREGUARD_RESYNC_MS,
  WireguardController,
  wireguardController,
  type WireguardDeps,
  wireguardStatus,
} from "./wireguard_controller.ts";
