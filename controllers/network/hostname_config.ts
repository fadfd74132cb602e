/**
 * HostnameConfigController: `machine.hostname` and `machine.domainname` →
 * HostnameSpec, falling back to a lease's hostname and domain where the
 * config gives none. Inputs: MachineConfig, DhcpLease. Output: HostnameSpec.
 * @module
 */
import type { DhcpLeaseSpec, MachineController } from "../../resources/mod.ts";
import { HOSTNAME_ID, HOSTNAME_SPEC, type HostnameSpecSpec } from "../../resources/mod.ts";
import type { MachineConfig } from "../../config/mod.ts";
import {
  boundLeases,
  CONFIG_INPUT,
  LEASE_INPUT,
  machineConfig,
  specController,
} from "./spec_transform.ts";

/** Builds the controller. */
export function hostnameConfigController(): MachineController {
  return specController({
    name: "network.HostnameConfigController",
    inputs: [CONFIG_INPUT, LEASE_INPUT],
    output: HOSTNAME_SPEC,
    build(ctx) {
      const config = machineConfig(ctx);
      const spec = config && hostnameSpec(config, boundLeases(ctx));
      return spec ? [{ id: HOSTNAME_ID, spec }] : [];
    },
  });
}

/** Pure: the wanted names; undefined when neither config nor a lease names the node. */
export function hostnameSpec(
  config: MachineConfig,
  leases: readonly DhcpLeaseSpec[],
): HostnameSpecSpec | undefined {
  const fromLease = leases.find((l) => l.hostname);
  const hostname = config.machine.hostname || fromLease?.hostname;
  if (!hostname) return undefined;
  const domain = config.machine.domainname ?? leases.find((l) => l.domain)?.domain ?? "";
  return {
    hostname,
    domainname: domain,
    origin: config.machine.hostname ? "config" : "dhcp",
  };
}
