/**
 * The pure plan that turns the wanted links (LinkSpecs) and the kernel's
 * links into ordered steps, in the order the kernel requires:
 * 1. delete the links machined created (alias `machined`) that are no longer
 *    wanted, or whose kind or options changed (VLANs first);
 * 2. release ports from masters they should no longer be in;
 * 3. create the bonds and bridges;
 * 4. set each bond port down (a bond refuses a port that is up: EPERM), then
 *    enslave every port (a bond opens its port again);
 * 5. create the VLANs, whose parent may be a bond or bridge made in step 3.
 * Bringing links up and setting MTUs follows, per LinkSpec. A link of the
 * same name that machined did not create is never deleted or changed: it is
 * reported as a conflict.
 * @module
 */
import type { LinkCreate, LinkSpecSpec } from "../../resources/mod.ts";
import { type LinkCreateSpec, type LinkInfo, MACHINED_ALIAS } from "../../platform/network/mod.ts";

/** One kernel change. */
export type LinkStep =
  | { op: "delete"; link: string; why: "unwanted" | "changed" }
  | { op: "release"; link: string; from: string }
  | { op: "create"; spec: LinkCreateSpec }
  | { op: "down"; link: string }
  | { op: "enslave"; link: string; master: string };

/** The steps, and the wanted links that cannot be made because the name is someone else's. */
export interface LinkPlan {
  steps: LinkStep[];
  conflicts: { link: string; kind: string }[];
}

const VIRTUAL = new Set(["vlan", "bond", "bridge", "wireguard"]);

/** Pure: the plan for `wanted` (running LinkSpecs) against the kernel's `observed` links. */
export function planLinks(
  wanted: readonly LinkSpecSpec[],
  observed: readonly LinkInfo[],
): LinkPlan {
  const want = new Map(wanted.map((w) => [w.name, w]));
  const byIndex = new Map(observed.map((l) => [l.index, l]));
  const steps: LinkStep[] = [];
  const conflicts: LinkPlan["conflicts"] = [];
  const gone = new Set<string>();
  const deletions = observed
    .filter((o) => o.alias === MACHINED_ALIAS && VIRTUAL.has(o.kind ?? ""))
    .sort((a, b) => Number(b.kind === "vlan") - Number(a.kind === "vlan"));
  for (const o of deletions) {
    const create = want.get(o.name)?.create;
    if (create && matches(o, create, byIndex)) continue;
    steps.push({ op: "delete", link: o.name, why: create ? "changed" : "unwanted" });
    gone.add(o.name);
  }
  // A VLAN goes with its parent.
  for (const o of observed) {
    const parent = o.kind === "vlan" ? byIndex.get(o.parentIndex ?? -1) : undefined;
    if (parent && gone.has(parent.name)) gone.add(o.name);
  }
  const exists = (name: string) => observed.some((o) => o.name === name) && !gone.has(name);
  const current = (
    name: string,
  ) => (exists(name) ? observed.find((o) => o.name === name) : undefined);
  for (const o of observed) {
    const master = o.masterIndex === undefined ? undefined : byIndex.get(o.masterIndex);
    if (!master || gone.has(master.name) || gone.has(o.name)) continue;
    const target = want.get(o.name)?.master;
    if (target !== master.name && master.alias === MACHINED_ALIAS) {
      steps.push({ op: "release", link: o.name, from: master.name });
    }
  }
  const creates = wanted.filter((w) => w.create);
  for (const w of creates.filter((w) => w.create!.kind !== "vlan")) {
    const o = current(w.name);
    if (!o) steps.push({ op: "create", spec: createSpec(w.name, w.create!) });
    else if (o.alias !== MACHINED_ALIAS) conflicts.push({ link: w.name, kind: w.create!.kind });
  }
  for (const w of wanted.filter((w) => w.master !== undefined)) {
    const port = current(w.name);
    if (!port) continue; // not there (yet): its LinkStatus event re-plans
    const master = current(w.master!);
    if (master && port.masterIndex === master.index) continue;
    if (master && master.alias !== MACHINED_ALIAS) continue; // someone else's: a conflict above
    const kind = want.get(w.master!)?.create?.kind ?? master?.kind;
    if (kind === "bond" && port.up) steps.push({ op: "down", link: w.name });
    steps.push({ op: "enslave", link: w.name, master: w.master! });
  }
  for (const w of creates.filter((w) => w.create!.kind === "vlan")) {
    const o = current(w.name);
    const parent = (w.create as { parent: string }).parent;
    const parentComing = exists(parent) || creates.some((c) => c.name === parent);
    if (!o && parentComing) steps.push({ op: "create", spec: createSpec(w.name, w.create!) });
    else if (o && o.alias !== MACHINED_ALIAS) conflicts.push({ link: w.name, kind: "vlan" });
  }
  return { steps, conflicts };
}

/** Does the kernel's link already have the kind and options asked for? Unreported options match. */
export function matches(
  o: LinkInfo,
  c: LinkCreate,
  byIndex: ReadonlyMap<number, LinkInfo>,
): boolean {
  if (o.kind !== c.kind) return false;
  const same = <T>(have: T | undefined, want: T | undefined) =>
    have === undefined || want === undefined || have === want;
  switch (c.kind) {
    case "vlan":
      return same(o.vlanId, c.vlanId) &&
        byIndex.get(o.parentIndex ?? -1)?.name === c.parent;
    case "bond":
      return same<string>(o.bondMode, c.mode) && same(o.miimon, c.miimon) &&
        same<string>(o.lacpRate, c.lacpRate) && same<string>(o.xmitHashPolicy, c.xmitHashPolicy);
    case "bridge":
      return same(o.stp, c.stp);
    case "wireguard":
      return true;
  }
}

/** The backend request that creates `name` as `c`, marked as machined's. */
export function createSpec(name: string, c: LinkCreate): LinkCreateSpec {
  const alias = MACHINED_ALIAS;
  switch (c.kind) {
    case "vlan":
      return { name, alias, kind: "vlan", parent: c.parent, vlanId: c.vlanId };
    case "bond":
      return {
        name,
        alias,
        kind: "bond",
        mode: c.mode,
        miimon: c.miimon,
        ...(c.lacpRate ? { lacpRate: c.lacpRate } : {}),
        ...(c.xmitHashPolicy ? { xmitHashPolicy: c.xmitHashPolicy } : {}),
      };
    case "bridge":
      return { name, alias, kind: "bridge", stp: c.stp };
    case "wireguard":
      return { name, alias, kind: "wireguard" };
  }
}
