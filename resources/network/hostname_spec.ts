/**
 * HostnameSpec: the kernel hostname and domain name machined wants, from the
 * machine config, or from a DHCP lease where the config gives none.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const HOSTNAME_SPEC = "HostnameSpec";
/** The single HostnameSpec's (and HostnameStatus's) id. */
export const HOSTNAME_ID = "hostname";

export interface HostnameSpecSpec {
  readonly hostname: string;
  /** Empty: no domain. */
  readonly domainname: string;
  readonly origin: "config" | "dhcp";
}

export const hostnameSpecDescriptor: ResourceDescriptor<typeof HOSTNAME_SPEC, HostnameSpecSpec> = {
  type: HOSTNAME_SPEC,
  namespace: "network",
  aliases: ["hostnamespec", "hostnamespecs"],
  description: "Wanted hostname and domain name",
  columns: [
    { header: "HOSTNAME", value: (s) => s.hostname },
    { header: "DOMAIN", value: (s) => s.domainname },
    { header: "ORIGIN", value: (s) => s.origin },
  ],
};
