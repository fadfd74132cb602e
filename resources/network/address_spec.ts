/**
 * AddressSpec: an address machined wants on a link, from the machine config or
 * a DHCP lease. The address apply controller adds it and, on teardown, removes
 * it again only if machined was the one that added it.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const ADDRESS_SPEC = "AddressSpec";

/** Where a wanted address or route comes from. */
export type NetworkOrigin = "static" | "dhcp" | "dhcp6";

/** One wanted address; the id is `link/address/prefixLen`. */
export interface AddressSpecSpec {
  readonly link: string;
  readonly family: "inet" | "inet6";
  /** Canonical text form. */
  readonly address: string;
  readonly prefixLen: number;
  readonly origin: NetworkOrigin;
}

/** The id of an AddressSpec or AddressStatus. */
export function addressId(link: string, address: string, prefixLen: number): string {
  return `${link}/${address}/${prefixLen}`;
}

export const addressSpecDescriptor: ResourceDescriptor<typeof ADDRESS_SPEC, AddressSpecSpec> = {
  type: ADDRESS_SPEC,
  namespace: "network",
  aliases: ["addressspec", "addressspecs"],
  description: "Wanted link addresses, from the machine config and DHCP",
  columns: [
    { header: "LINK", value: (s) => s.link },
    { header: "ADDRESS", value: (s) => `${s.address}/${s.prefixLen}` },
    { header: "ORIGIN", value: (s) => s.origin },
  ],
};
