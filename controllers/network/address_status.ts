/**
 * AddressStatusController: mirrors every address on every link into
 * AddressStatus, kept current by rtnetlink address events. No inputs.
 * Output: AddressStatus.
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { ADDRESS_STATUS, addressId, type AddressStatusSpec } from "../../resources/mod.ts";
import {
  type AddressInfo,
  type LinkInfo,
  type NetworkBackend,
  SCOPE,
} from "../../platform/network/mod.ts";
import { kernelWatchController } from "./kernel_watch.ts";

/** Builds the controller. */
export function addressStatusController(
  deps: { backend: NetworkBackend; windowMs?: number },
): MachineController {
  return kernelWatchController({
    name: "network.AddressStatusController",
    output: ADDRESS_STATUS,
    groups: ["link", "ipv4-address", "ipv6-address"],
    backend: deps.backend,
    windowMs: deps.windowMs,
    async read(b) {
      const links = await b.listLinks();
      return (await b.listAddresses()).map((a) => addressStatus(a, links))
        .map((spec) => ({ id: addressId(spec.link, spec.address, spec.prefixLen), spec }));
    },
  });
}

/** Pure: the status of one address, with its link's name. */
export function addressStatus(a: AddressInfo, links: readonly LinkInfo[]): AddressStatusSpec {
  return {
    link: links.find((l) => l.index === a.index)?.name ?? `if${a.index}`,
    linkIndex: a.index,
    family: a.family,
    address: a.address,
    prefixLen: a.prefixLen,
    scope: scopeName(a.scope),
    flags: a.flags,
  };
}

/** `global`, `site`, `link`, `host`, `nowhere`, or the number. */
export function scopeName(scope: number): string {
  const names: Record<number, string> = {
    [SCOPE.UNIVERSE]: "global",
    [SCOPE.SITE]: "site",
    [SCOPE.LINK]: "link",
    [SCOPE.HOST]: "host",
    [SCOPE.NOWHERE]: "nowhere",
  };
  return names[scope] ?? String(scope);
}
