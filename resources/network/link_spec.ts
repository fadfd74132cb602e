/**
 * LinkSpec: how machined wants one link (admin state, MTU, whether it runs a
 * DHCPv4 client), derived from the machine config. The link apply controller
 * makes the kernel match it; the DHCP controller runs a client where `dhcp`.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const LINK_SPEC = "LinkSpec";

/** The wanted state of a link; the id is the link name. */
export interface LinkSpecSpec {
  readonly name: string;
  readonly up: boolean;
  /** Absent: keep the driver's MTU. */
  readonly mtu?: number;
  readonly dhcp: boolean;
  /** `config` for listed interfaces, `default` for lo and the auto-DHCP link. */
  readonly origin: "config" | "default";
}

export const linkSpecDescriptor: ResourceDescriptor<typeof LINK_SPEC, LinkSpecSpec> = {
  type: LINK_SPEC,
  namespace: "network",
  aliases: ["linkspec", "linkspecs"],
  description: "Wanted link state (up, MTU, DHCP) from the machine config",
  columns: [
    { header: "UP", value: (s) => String(s.up) },
    { header: "MTU", value: (s) => s.mtu === undefined ? "" : String(s.mtu) },
    { header: "DHCP", value: (s) => String(s.dhcp) },
    { header: "ORIGIN", value: (s) => s.origin },
  ],
};
