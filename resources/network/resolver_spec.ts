/**
 * ResolverSpec: the DNS resolvers and search domains machined writes to
 * resolv.conf: config first, then what DHCP learnt.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const RESOLVER_SPEC = "ResolverSpec";
/** The single ResolverSpec's (and ResolverStatus's) id. */
export const RESOLVER_ID = "resolvers";

export interface ResolverSpecSpec {
  /** In order, at most 3 (the libc resolver ignores more). */
  readonly nameservers: readonly string[];
  /** In order, at most 6. */
  readonly search: readonly string[];
}

export const resolverSpecDescriptor: ResourceDescriptor<typeof RESOLVER_SPEC, ResolverSpecSpec> = {
  type: RESOLVER_SPEC,
  namespace: "network",
  aliases: ["resolverspec", "resolverspecs"],
  description: "Wanted DNS resolvers and search domains",
  columns: [
    { header: "NAMESERVERS", value: (s) => s.nameservers.join(",") },
    { header: "SEARCH", value: (s) => s.search.join(",") },
  ],
};
