/**
 * LinkStatusController: mirrors the kernel's links into LinkStatus, kept
 * current by rtnetlink link events (hotplug included). No inputs. Output:
 * LinkStatus.
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { LINK_STATUS, type LinkStatusSpec } from "../../resources/mod.ts";
import { type LinkInfo, MACHINED_ALIAS, type NetworkBackend } from "../../platform/network/mod.ts";
import { kernelWatchController } from "./kernel_watch.ts";

/** Builds the controller. */
export function linkStatusController(
  deps: { backend: NetworkBackend; windowMs?: number },
): MachineController {
  return kernelWatchController({
    name: "network.LinkStatusController",
    output: LINK_STATUS,
    groups: ["link"],
    backend: deps.backend,
    windowMs: deps.windowMs,
    read: async (b) => {
      const links = await b.listLinks();
      const names = new Map(links.map((l) => [l.index, l.name]));
      return links.map((l) => ({ id: l.name, spec: linkStatus(l, names) }));
    },
  });
}

/** Pure: the status of one link; `names` maps indexes to names (for the master). */
export function linkStatus(
  l: LinkInfo,
  names: ReadonlyMap<number, string> = new Map(),
): LinkStatusSpec {
  const type = l.hwType === 1
    ? "ether"
    : l.hwType === 772
    ? "loopback"
    : l.hwType === 65534
    ? "none"
    : `arphrd-${l.hwType}`;
  return {
    name: l.name,
    index: l.index,
    type,
    kind: l.kind ?? "",
    mac: l.mac ?? "",
    ...(l.permMac === undefined ? {} : { permMac: l.permMac }),
    mtu: l.mtu,
    up: l.up,
    operstate: l.operstate,
    physical: type === "ether" && !l.kind && l.name !== "lo",
    master: l.masterIndex === undefined ? "" : names.get(l.masterIndex) ?? String(l.masterIndex),
    ours: l.alias === MACHINED_ALIAS,
    ...(l.vlanId === undefined ? {} : { vlanId: l.vlanId }),
    ...(l.bondMode === undefined ? {} : { bondMode: l.bondMode }),
    ...(l.stp === undefined ? {} : { stp: l.stp }),
    ...(l.lacp === undefined ? {} : { lacp: { ...l.lacp } }),
  };
}
