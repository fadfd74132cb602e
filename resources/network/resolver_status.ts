/** ResolverStatus: the resolvers and search domains resolv.conf holds now, and where. */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const RESOLVER_STATUS = "ResolverStatus";

export interface ResolverStatusSpec {
  readonly nameservers: readonly string[];
  readonly search: readonly string[];
  /** The file written. */
  readonly path: string;
}

export const resolverStatusDescriptor: ResourceDescriptor<
  typeof RESOLVER_STATUS,
  ResolverStatusSpec
> = {
  type: RESOLVER_STATUS,
  namespace: "network",
  aliases: ["resolverstatus", "resolverstatuses", "resolver", "resolvers", "dns"],
  description: "DNS resolvers and search domains in force",
  columns: [
    { header: "NAMESERVERS", value: (s) => s.nameservers.join(",") },
    { header: "SEARCH", value: (s) => s.search.join(",") },
    { header: "PATH", value: (s) => s.path },
  ],
};
