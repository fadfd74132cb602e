/**
 * Network resource types (namespace `network`): specs derived from the machine
 * config and DHCP, and statuses read from the kernel.
 *
 * @example
 * ```ts
 * import { LINK_STATUS, type LinkStatusSpec } from "./resources/network/mod.ts";
 * const up = (s: LinkStatusSpec) => s.operstate === "up";
 * console.log(LINK_STATUS, up);
 * ```
 * @module
 */
export * from "./link_spec.ts";
export * from "./address_spec.ts";
export * from "./route_spec.ts";
export * from "./hostname_spec.ts";
export * from "./resolver_spec.ts";
export * from "./link_status.ts";
export * from "./address_status.ts";
export * from "./route_status.ts";
export * from "./resolver_status.ts";
export * from "./hostname_status.ts";
export * from "./dhcp_lease.ts";
export * from "./dhcp6_lease.ts";
export * from "./firewall_status.ts";
export * from "./wireguard_status.ts";
