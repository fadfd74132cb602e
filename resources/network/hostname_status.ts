/** HostnameStatus: the kernel's hostname and domain name, read back after setting them. */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const HOSTNAME_STATUS = "HostnameStatus";

export interface HostnameStatusSpec {
  readonly hostname: string;
  /** Empty: no domain. */
  readonly domainname: string;
  /** `hostname.domainname`, or the hostname alone. */
  readonly fqdn: string;
}

export const hostnameStatusDescriptor: ResourceDescriptor<
  typeof HOSTNAME_STATUS,
  HostnameStatusSpec
> = {
  type: HOSTNAME_STATUS,
  namespace: "network",
  aliases: ["hostnamestatus", "hostnamestatuses", "hostname", "hostnames"],
  description: "The node's hostname and domain name",
  columns: [
    { header: "HOSTNAME", value: (s) => s.hostname },
    { header: "DOMAIN", value: (s) => s.domainname },
    { header: "FQDN", value: (s) => s.fqdn },
  ],
};
