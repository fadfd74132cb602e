/**
 * `machine.network.bonds`, `.vlans` and `.bridges`: virtual links machined
 * creates, each configured like an interface (up, MTU, DHCP, addresses,
 * routes). Ports are chosen by kernel name or by MAC address. Rules across
 * entries (a port in two masters, a VLAN on a bond's port, a port with an
 * address, name lengths) are in `../link_checks.ts`.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { intRange } from "./primitives.ts";
import { checkWithHint, quote } from "./hints.ts";
import { InterfaceName, linkEntries } from "./link_entries.ts";
import type { InterfaceConfig, NetworkConfig, RouteConfig } from "./network.ts";

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** A port: a kernel name, or `{ mac }` for the physical link with that address. */
export const PortSelector = v.union(
  [
    InterfaceName,
    mapping({
      mac: v.pipe(
        v.string("expected a MAC address string"),
        v.toLowerCase(),
        checkWithHint(
          (s: string) => MAC.test(s),
          (issue) => `invalid MAC address ${quote(issue.input)}`,
          () => 'six hex pairs separated by ":", e.g. "52:54:00:12:34:56"',
        ),
        v.description(
          "MAC address of a NIC (its permanent one; never a VLAN, bond or bridge sharing it).",
        ),
      ),
    }),
  ],
  'expected an interface name or { mac: "aa:bb:cc:dd:ee:ff" }',
);

const ports = (what: string) =>
  v.pipe(
    v.array(PortSelector, "expected a list of ports"),
    v.description(
      `Links enslaved to the ${what}, by name or \`{ mac: ... }\` (a NIC's permanent MAC; never a VLAN, bond or bridge that shares it).`,
    ),
    v.examples([["eth0", { mac: "52:54:00:12:34:57" }]]),
  );

/** The bond modes machined supports. */
export const BOND_MODES = ["active-backup", "802.3ad"] as const;

/** A bond (Linux bonding driver). */
export const BondSchema = mapping({
  name: v.pipe(InterfaceName, v.description("Name of the bond."), v.examples(["bond0"])),
  mode: v.pipe(
    v.picklist(BOND_MODES, 'expected "active-backup" or "802.3ad"'),
    v.description(
      "`active-backup`: one port carries traffic, the next takes over when it fails. `802.3ad`: LACP link aggregation (the switch must speak LACP).",
    ),
  ),
  ports: v.pipe(ports("bond"), v.minLength(1, "a bond needs at least one port")),
  miimon: v.optional(
    v.pipe(
      intRange(0, 60000, "miimon"),
      v.description("How often the ports' carrier is checked, in ms; 0 turns the check off."),
    ),
    100,
  ),
  lacp_rate: v.optional(
    v.pipe(
      v.picklist(["slow", "fast"], 'expected "slow" or "fast"'),
      v.description("802.3ad only: LACPDUs every 30 s (`slow`) or every second (`fast`)."),
    ),
  ),
  xmit_hash_policy: v.optional(
    v.pipe(
      v.picklist(
        ["layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4"],
        'expected "layer2", "layer2+3", "layer3+4", "encap2+3" or "encap3+4"',
      ),
      v.description(
        "802.3ad only: which headers choose a flow's port. The kernel's default is `layer2`.",
      ),
    ),
  ),
  ...linkEntries,
});

/** An 802.1Q VLAN. */
export const VlanSchema = mapping({
  name: v.optional(
    v.pipe(
      InterfaceName,
      v.description("Name of the VLAN link. Omit for `<parent>.<id>` (at most 15 bytes)."),
      v.examples(["mgmt"]),
    ),
  ),
  parent: v.pipe(
    InterfaceName,
    v.description("The link it is tagged on: a NIC, a bond or a bridge (never a bond's port)."),
    v.examples(["bond0"]),
  ),
  id: v.pipe(intRange(1, 4094, "VLAN id"), v.description("802.1Q VLAN id."), v.examples([42])),
  ...linkEntries,
});

/** A bridge. */
export const BridgeSchema = mapping({
  name: v.pipe(InterfaceName, v.description("Name of the bridge."), v.examples(["br0"])),
  ports: v.optional(ports("bridge"), []),
  stp: v.optional(
    v.pipe(v.boolean("expected true or false"), v.description("Run the spanning tree protocol.")),
    false,
  ),
  ...linkEntries,
});

/** A parsed bond entry. */
export type BondConfig = v.InferOutput<typeof BondSchema>;
/** A parsed VLAN entry (`name` may be absent: see {@link vlanName}). */
export type VlanConfig = v.InferOutput<typeof VlanSchema>;
/** A parsed bridge entry. */
export type BridgeConfig = v.InferOutput<typeof BridgeSchema>;
/** A parsed port selector. */
export type PortSelectorConfig = v.InferOutput<typeof PortSelector>;

/** A VLAN's link name: its own, else `<parent>.<id>`. */
export function vlanName(vlan: { name?: string; parent: string; id: number }): string {
  return vlan.name ?? `${vlan.parent}.${vlan.id}`;
}

/** One configured link of any kind, with the fields every kind shares. */
export interface ConfiguredLink {
  name: string;
  kind: "interface" | "bond" | "vlan" | "bridge" | "wireguard";
  up: boolean;
  mtu?: number;
  dhcp: boolean;
  /** SLAAC on this link: true on, false off, absent left to the kernel. */
  slaac?: boolean;
  /** Stateful DHCPv6 (IA_NA) on this link. */
  dhcp6: boolean;
  addresses: string[];
  routes: RouteConfig[];
}

/**
 * Every link the config names with addresses, DHCP, MTU or routes:
 * interfaces, then bonds, VLANs and bridges, so the address, route and link
 * controllers treat them alike.
 */
export function configuredLinks(network: NetworkConfig): ConfiguredLink[] {
  const pick = (kind: ConfiguredLink["kind"], name: string, l: InterfaceLike): ConfiguredLink => ({
    name,
    kind,
    up: l.up,
    ...(l.mtu === undefined ? {} : { mtu: l.mtu }),
    dhcp: l.dhcp,
    ...(l.ipv6?.slaac === undefined ? {} : { slaac: l.ipv6.slaac }),
    dhcp6: l.ipv6?.dhcp ?? false,
    addresses: l.addresses,
    routes: l.routes,
  });
  return [
    ...network.interfaces.map((i) => pick("interface", i.name, i)),
    ...network.bonds.map((b) => pick("bond", b.name, b)),
    ...network.vlans.map((x) => pick("vlan", vlanName(x), x)),
    ...network.bridges.map((b) => pick("bridge", b.name, b)),
    ...network.wireguard.map((w) =>
      pick("wireguard", w.name, { ...w, dhcp: false, ipv6: undefined })
    ),
  ];
}

type InterfaceLike = Omit<InterfaceConfig, "name">;
