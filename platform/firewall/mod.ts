/**
 * The ingress firewall's privileged surface: one nftables transaction applied atomically, one
 * table read back in a canonical form. {@link NftFirewallBackend} runs Debian's `nft`;
 * {@link FakeFirewallBackend} simulates tables in memory with failure injection.
 *
 * @example
 * ```ts
 * import { NftFirewallBackend } from "./platform/firewall/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const fw = new NftFirewallBackend({ process: nativeProcessBackend() });
 * console.log(await fw.read({ family: "inet", name: "machined" }));
 * ```
 * @module
 */
export { type FirewallBackend, FirewallBackendError, type TableRef, tableText } from "./backend.ts";
export {
  NFT_STATE_DIR,
  NFT_TIMEOUT_MS,
  NftFirewallBackend,
  type NftOptions,
} from "./backend_native.ts";
export { FakeFirewallBackend } from "./backend_fake.ts";
export {
  CONFORMANCE_TABLE,
  FIREWALL_CONFORMANCE,
  type FirewallTarget,
  replaceTable,
} from "./backend_conformance.ts";
export { canonicalListing, MAX_LISTING_BYTES } from "./canonical.ts";
