/**
 * LinkSpec: how machined wants one link (admin state, MTU, whether it runs a
 * DHCPv4 client), derived from the machine config. The link apply controller
 * makes the kernel match it; the DHCP controller runs a client where `dhcp`.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const LINK_SPEC = "LinkSpec";

/** A virtual link machined creates (and marks as its own), with its kind's options. */
export type LinkCreate =
  | { readonly kind: "vlan"; readonly parent: string; readonly vlanId: number }
  | {
    readonly kind: "bond";
    readonly mode: "active-backup" | "802.3ad";
    readonly miimon: number;
    readonly lacpRate?: "slow" | "fast";
    readonly xmitHashPolicy?: "layer2" | "layer2+3" | "layer3+4" | "encap2+3" | "encap3+4";
  }
  | { readonly kind: "bridge"; readonly stp: boolean }
  /** Keys and peers are set by wireguard.WireguardController, not here. */
  | { readonly kind: "wireguard" };

/** The wanted state of a link; the id is the link name. */
export interface LinkSpecSpec {
  readonly name: string;
  readonly up: boolean;
  /** Absent: keep the driver's MTU. */
  readonly mtu?: number;
  readonly dhcp: boolean;
  /**
   * SLAAC on this link (its own `accept_ra`/`autoconf`, never `default`'s):
   * true on, false off, absent: the kernel's values are left alone.
   */
  readonly slaac?: boolean;
  /** Run a DHCPv6 client (IA_NA) on this link; absent: no. */
  readonly dhcp6?: boolean;
  /** `config` for listed interfaces, `default` for lo and the auto-DHCP link. */
  readonly origin: "config" | "default";
  /** Present when machined creates this link (a bond, VLAN, bridge or WireGuard interface). */
  readonly create?: LinkCreate;
  /** The bond or bridge this link is a port of (a port never runs DHCP). */
  readonly master?: string;
}

export const linkSpecDescriptor: ResourceDescriptor<typeof LINK_SPEC, LinkSpecSpec> = {
  type: LINK_SPEC,
  namespace: "network",
  aliases: ["linkspec", "linkspecs"],
  description: "Wanted link state (up, MTU, DHCP, kind, master) from the machine config",
  columns: [
    { header: "UP", value: (s) => String(s.up) },
    { header: "MTU", value: (s) => s.mtu === undefined ? "" : String(s.mtu) },
    { header: "DHCP", value: (s) => String(s.dhcp) },
    { header: "SLAAC", value: (s) => s.slaac === undefined ? "" : String(s.slaac) },
    { header: "DHCP6", value: (s) => String(s.dhcp6 ?? false) },
    { header: "ORIGIN", value: (s) => s.origin },
    { header: "KIND", value: (s) => s.create?.kind ?? "" },
    { header: "MASTER", value: (s) => s.master ?? "" },
  ],
};
