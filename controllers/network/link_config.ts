/**
 * LinkConfigController: the machine config's interfaces, bonds, VLANs and
 * bridges → LinkSpec (up, MTU, DHCP; what to create; each port's master, with
 * MAC selectors resolved against LinkStatus). `lo` is always brought up. With
 * no link configured, the first physical link (by index) that is no port gets
 * DHCP, so a node with an empty network section is reachable. Inputs:
 * MachineConfig, LinkStatus. Output: LinkSpec.
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import {
  LINK_SPEC,
  LINK_STATUS,
  type LinkCreate,
  type LinkSpecSpec,
  type LinkStatusSpec,
} from "../../resources/mod.ts";
import {
  configuredLinks,
  type MachineConfig,
  type PortSelectorConfig,
  vlanName,
} from "../../config/mod.ts";
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
  const network = config.machine.network;
  const creates = createsOf(network);
  const out = new Map<string, LinkSpecSpec>();
  for (const l of configuredLinks(network)) {
    const create = creates.get(l.name);
    out.set(l.name, {
      name: l.name,
      up: l.up || l.dhcp || l.dhcp6,
      ...(l.mtu === undefined ? {} : { mtu: l.mtu }),
      dhcp: l.dhcp,
      ...(l.slaac === undefined ? {} : { slaac: l.slaac }),
      ...(l.dhcp6 ? { dhcp6: true } : {}),
      origin: "config",
      ...(create ? { create } : {}),
    });
  }
  for (const m of [...network.bonds, ...network.bridges]) {
    for (const port of m.ports.flatMap((p) => resolvePort(p, links))) {
      const own = out.get(port);
      // A port is up (a bond opens it anyway) and never runs DHCP; the schema refuses both on it.
      out.set(port, {
        ...own,
        name: port,
        up: true,
        dhcp: false,
        origin: "config",
        master: m.name,
      });
    }
  }
  if (!out.has("lo")) out.set("lo", { name: "lo", up: true, dhcp: false, origin: "default" });
  const nothing = network.interfaces.length + network.bonds.length + network.vlans.length +
      network.bridges.length === 0;
  if (autoDhcp && nothing) {
    const first = links.filter((l) => l.physical && !l.master).sort((a, b) => a.index - b.index)[0];
    if (first) out.set(first.name, { name: first.name, up: true, dhcp: true, origin: "default" });
  }
  return [...out.values()];
}

/**
 * A port selector's link name: the name itself, or the Ethernet link with
 * that MAC that owns it (a NIC, or a veth). Links that borrow another's MAC
 * (VLANs, bonds, bridges, macvlans) never match: a bond, and a VLAN on it,
 * carry their port's MAC, and enslaving those is a Talos failure mode. The NIC's
 * permanent MAC is compared, since a bond gives its ports the bond's MAC: the
 * second port would otherwise stop matching once enslaved, and be released.
 */
export function resolvePort(p: PortSelectorConfig, links: readonly LinkStatusSpec[]): string[] {
  if (typeof p === "string") return [p];
  return links
    .filter((l) => l.type === "ether" && !BORROWS_MAC.has(l.kind))
    .filter((l) => (l.permMac ?? l.mac) === p.mac)
    .map((l) => l.name)
    .slice(0, 1);
}

/** Link kinds whose MAC is another link's (their parent's or a port's). */
const BORROWS_MAC = new Set(["vlan", "bond", "bridge", "macvlan", "macvtap", "ipvlan", "team"]);

function createsOf(network: MachineConfig["machine"]["network"]): Map<string, LinkCreate> {
  const out = new Map<string, LinkCreate>();
  for (const b of network.bonds) {
    out.set(b.name, {
      kind: "bond",
      mode: b.mode,
      miimon: b.miimon,
      ...(b.lacp_rate === undefined ? {} : { lacpRate: b.lacp_rate }),
      ...(b.xmit_hash_policy === undefined ? {} : { xmitHashPolicy: b.xmit_hash_policy }),
    });
  }
  for (const v of network.vlans) {
    out.set(vlanName(v), { kind: "vlan", parent: v.parent, vlanId: v.id });
  }
  for (const b of network.bridges) out.set(b.name, { kind: "bridge", stp: b.stp });
  for (const w of network.wireguard) out.set(w.name, { kind: "wireguard" });
  return out;
}
