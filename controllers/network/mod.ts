/**
 * The network domain: machine config (and DHCP leases) → LinkSpec,
 * AddressSpec, RouteSpec, HostnameSpec, ResolverSpec → the kernel, through
 * the network and identity backends → LinkStatus, AddressStatus, RouteStatus,
 * HostnameStatus, ResolverStatus, DhcpLease, Dhcp6Lease. All in namespace `network`.
 *
 * @example
 * ```ts
 * import { createNetworkControllers } from "./controllers/network/mod.ts";
 * import { FakeNetworkBackend } from "./platform/network/backend_fake.ts";
 * import { FakeIdentityBackend } from "./platform/identity/mod.ts";
 *
 * const network = createNetworkControllers({
 *   backend: new FakeNetworkBackend(),
 *   identity: new FakeIdentityBackend(),
 *   resolvConfPath: "/tmp/resolv.conf",
 * });
 * // for (const c of network.controllers) runtime.register(c);
 * // on shutdown, after runtime.stop(): await network.shutdown();
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import type { NetworkBackend } from "../../platform/network/mod.ts";
import type { IdentityBackend } from "../../platform/identity/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { linkConfigController } from "./link_config.ts";
import { addressConfigController } from "./address_config.ts";
import { routeConfigController } from "./route_config.ts";
import { hostnameConfigController } from "./hostname_config.ts";
import { resolverConfigController } from "./resolver_config.ts";
import { LinkSpecController } from "./link_spec.ts";
import { AddressSpecController } from "./address_spec.ts";
import { RouteSpecController } from "./route_spec.ts";
import { HostnameSpecController } from "./hostname_spec.ts";
import { ResolverSpecController } from "./resolver_spec.ts";
import { linkStatusController } from "./link_status.ts";
import { addressStatusController } from "./address_status.ts";
import { routeStatusController } from "./route_status.ts";
import { DhcpClientController } from "./dhcp_controller.ts";
import { Dhcp6ClientController } from "./dhcp6_controller.ts";

/** What the network controllers need. */
export interface NetworkDeps {
  backend: NetworkBackend;
  /** Sets hostname and domain name; without it HostnameSpec is computed but not applied. */
  identity?: IdentityBackend;
  /**
   * Where resolv.conf is written; no default, so nothing (a test run as root above all)
   * writes the host's /etc/resolv.conf without naming it.
   */
  resolvConfPath: string;
  /** DHCP on the first physical link when no interface is configured. @default true */
  autoDhcp?: boolean;
  /** Real-time bound on waiting for one DHCP reply. @default 3000 */
  dhcpReplyTimeoutMs?: number;
  /**
   * Real-time bound on waiting for one DHCPv6 reply (a SOLICIT always waits it
   * out to collect ADVERTISEs unless one has preference 255). @default 1000
   */
  dhcp6ReplyTimeoutMs?: number;
  /** Status controllers re-list the kernel this often (ms) besides on events; 0 never. @default 60000 */
  watchWindowMs?: number;
  events?: EventBus;
}

/** The controllers plus the shutdown hook. */
export interface NetworkDomain {
  controllers: MachineController[];
  /** RELEASE DHCP leases and close sockets; call after the runtime stopped. */
  shutdown(): Promise<void>;
}

/** Build the network domain. */
export function createNetworkControllers(deps: NetworkDeps): NetworkDomain {
  const { backend } = deps;
  const watch = { backend, windowMs: deps.watchWindowMs };
  const dhcp = new DhcpClientController({
    backend,
    events: deps.events,
    replyTimeoutMs: deps.dhcpReplyTimeoutMs,
  });
  const dhcp6 = new Dhcp6ClientController({
    backend,
    events: deps.events,
    replyTimeoutMs: deps.dhcp6ReplyTimeoutMs,
  });
  const controllers: MachineController[] = [
    linkConfigController({ autoDhcp: deps.autoDhcp }),
    addressConfigController(),
    routeConfigController(),
    hostnameConfigController(),
    resolverConfigController(),
    new LinkSpecController({ backend }),
    new AddressSpecController({ backend }),
    new RouteSpecController({ backend }),
    new ResolverSpecController({ resolvConfPath: deps.resolvConfPath }),
    linkStatusController(watch),
    addressStatusController(watch),
    routeStatusController(watch),
    dhcp,
    dhcp6,
  ];
  if (deps.identity) {
    controllers.push(new HostnameSpecController({ identity: deps.identity, events: deps.events }));
  }
  return {
    controllers,
    shutdown: async () => {
      await dhcp.shutdown();
      await dhcp6.shutdown();
    },
  };
}

/** The controllers alone (no DHCP RELEASE on shutdown). */
export function networkControllers(deps: NetworkDeps): MachineController[] {
  return createNetworkControllers(deps).controllers;
}

export { DhcpClient, type Lease, leaseFromAck } from "./dhcp_client.ts";
export { decodeDhcp, type DhcpMessage, encodeDhcp } from "./dhcp_packet.ts";
export { renderResolvConf } from "./resolver_spec.ts";
export { NetworkApplyError } from "./apply_error.ts";
export { addressStatusController } from "./address_status.ts";
