/**
 * LinkConfigController: the machine config's interfaces → LinkSpec (up, MTU,
 * DHCP). `lo` is always brought up. With no interface configured, the first
 * physical link (by index) gets DHCP, so a node with an empty network section
 * is reachable. Inputs: MachineConfig, LinkStatus. Output: LinkSpec.
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import {
  LINK_SPEC,
  LINK_STATUS,
  type LinkSpecSpec,
  type LinkStatusSpec,
} from "../../resources/mod.ts";
import type { MachineConfig } from "../../config/mod.ts";
import { CONFIG_INPUT, networkConfig, specController } from "./spec_transform.ts";

/** Options of {@link linkConfigController}. */
export interface LinkConfigOptions {
  /** DHCP on the first physical link when no interface is configured. @default true */
  autoDhcp?: boolean;
}

/** Builds the controller. */
export function linkConfigController(options: LinkConfigOptions = {}): MachineController {
  return specController({
    name: "network.LinkConfigController",
    inputs: [CONFIG_INPUT, { type: LINK_STATUS, kind: "weak" }],
    output: LINK_SPEC,
    build(ctx) {
      const config = networkConfig(ctx);
      const links = ctx.list(LINK_STATUS).map((r) => r.spec);
      return linkSpecs(config, links, options.autoDhcp ?? true).map((spec) => ({
        id: spec.name,
        spec,
      }));
    },
  });
}

/** Pure: the LinkSpecs for a config and the links the kernel has. */
export function linkSpecs(
  config: MachineConfig,
  links: readonly LinkStatusSpec[],
  autoDhcp: boolean,
): LinkSpecSpec[] {
  const out: LinkSpecSpec[] = config.machine.network.interfaces.map((i) => ({
    name: i.name,
    up: i.up || i.dhcp,
    ...(i.mtu === undefined ? {} : { mtu: i.mtu }),
    dhcp: i.dhcp,
    origin: "config",
  }));
  if (!out.some((l) => l.name === "lo")) {
    out.push({ name: "lo", up: true, dhcp: false, origin: "default" });
  }
  if (autoDhcp && config.machine.network.interfaces.length === 0) {
    const first = links.filter((l) => l.physical).sort((a, b) => a.index - b.index)[0];
    if (first) out.push({ name: first.name, up: true, dhcp: true, origin: "default" });
  }
  return out;
}
