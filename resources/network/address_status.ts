/** AddressStatus: an address assigned to a link, as the kernel reports it. */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const ADDRESS_STATUS = "AddressStatus";

/** One address; the id is `link/address/prefixLen`. */
export interface AddressStatusSpec {
  readonly link: string;
  readonly linkIndex: number;
  readonly family: "inet" | "inet6";
  readonly address: string;
  readonly prefixLen: number;
  /** `global`, `link`, `host` or the numeric scope. */
  readonly scope: string;
  /** IFA_F_* bits. */
  readonly flags: number;
}

export const addressStatusDescriptor: ResourceDescriptor<
  typeof ADDRESS_STATUS,
  AddressStatusSpec
> = {
  type: ADDRESS_STATUS,
  namespace: "network",
  aliases: ["addressstatuses", "address", "addresses", "addr"],
  description: "Addresses on links as the kernel reports them",
  columns: [
    { header: "LINK", value: (s) => s.link },
    { header: "ADDRESS", value: (s) => `${s.address}/${s.prefixLen}` },
    { header: "SCOPE", value: (s) => s.scope },
  ],
};
