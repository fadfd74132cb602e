/**
 * Kernel rules for virtual links that the fake network backend follows:
 * the attributes a new VLAN, bond or bridge reports, which enslavements the
 * kernel refuses, and how a master's and a VLAN's operstate follow their
 * ports and parent. Checked against rtnetlink by the conformance suite where
 * the test kernel has the driver.
 * @module
 */
import type { LinkCreateSpec, LinkInfo, OperState } from "./backend.ts";

/** The kind-specific attributes a newly created link reports (kernel defaults filled). */
export function createdLinkInfo(spec: LinkCreateSpec, parent?: LinkInfo): Partial<LinkInfo> {
  const out: Partial<LinkInfo> = spec.alias ? { alias: spec.alias } : {};
  switch (spec.kind) {
    case "vlan":
      return { ...out, vlanId: spec.vlanId, parentIndex: parent?.index, mtu: parent?.mtu };
    case "bond":
      return {
        ...out,
        bondMode: spec.mode ?? "balance-rr",
        miimon: spec.miimon ?? 0,
        lacpRate: spec.lacpRate ?? "slow",
        xmitHashPolicy: spec.xmitHashPolicy ?? "layer2",
      };
    case "bridge":
      return { ...out, stp: spec.stp ?? false };
    case "wireguard":
      // The kernel's wireguard driver: no ARP, a point-to-point device with MTU 1420.
      return { ...out, mtu: 1420 };
  }
}

/** The errno and message the kernel answers when `link` cannot be enslaved to `master`. */
export function enslaveError(link: LinkInfo, master: LinkInfo): [string, string] | undefined {
  if (master.kind !== "bond" && master.kind !== "bridge") {
    return ["EOPNOTSUPP", `${master.name} cannot have ports`];
  }
  if (link.index === master.index) return ["EINVAL", "a link cannot be its own master"];
  if (master.kind === "bridge" && link.kind === "bridge") {
    return ["ELOOP", "a bridge cannot be a bridge port"];
  }
  if (master.kind === "bond" && link.up) return ["EPERM", "Device can not be enslaved while up"];
  return undefined;
}

/**
 * Operstate of a bond, bridge or VLAN: down while admin down; a master is up
 * when a port is up (a bridge without one is `unknown`, a bond `down`); a
 * VLAN is up when its parent is, else `lowerlayerdown`.
 */
export function virtualOperstate(link: LinkInfo, all: readonly LinkInfo[]): OperState {
  if (!link.up) return "down";
  if (link.kind === "vlan") {
    const parent = all.find((l) => l.index === link.parentIndex);
    return parent?.operstate === "up" || parent?.operstate === "unknown" && parent.up
      ? "up"
      : "lowerlayerdown";
  }
  const ports = all.filter((l) => l.masterIndex === link.index);
  if (ports.some((p) => p.operstate === "up")) return "up";
  return link.kind === "bridge" ? "unknown" : "down";
}
