import assert from "node:assert/strict";
import type { LinkSpecSpec } from "../../resources/mod.ts";
import { type LinkInfo, MACHINED_ALIAS } from "../../platform/network/mod.ts";
import { type LinkStep, planLinks } from "./link_plan.ts";

let next = 1;
const link = (name: string, extra: Partial<LinkInfo> = {}): LinkInfo => ({
  index: next++,
  name,
  hwType: 1,
  mtu: 1500,
  flags: 0,
  up: false,
  operstate: "down",
  ...extra,
});
const spec = (name: string, extra: Partial<LinkSpecSpec> = {}): LinkSpecSpec => ({
  name,
  up: true,
  dhcp: false,
  origin: "config",
  ...extra,
});
const bond = spec("bond0", { create: { kind: "bond", mode: "802.3ad", miimon: 100 } });
const vlan = spec("bond0.42", { create: { kind: "vlan", parent: "bond0", vlanId: 42 } });
const ports = [spec("eth0", { master: "bond0" }), spec("eth1", { master: "bond0" })];
const ops = (steps: LinkStep[]) =>
  steps.map((s) =>
    s.op === "create"
      ? `create ${s.spec.name}`
      : s.op === "enslave"
      ? `enslave ${s.link} ${s.master}`
      : `${s.op} ${s.link}`
  );

Deno.test("plan: master first, up ports down before a bond takes them, the VLAN last", () => {
  const observed = [link("eth0", { up: true }), link("eth1")];
  const plan = planLinks([vlan, bond, ...ports], observed);
  assert.deepEqual(ops(plan.steps), [
    "create bond0",
    "down eth0",
    "enslave eth0 bond0",
    "enslave eth1 bond0",
    "create bond0.42",
  ]);
  const create = plan.steps[0];
  assert.ok(create.op === "create" && create.spec.alias === MACHINED_ALIAS, "marked as ours");
  assert.deepEqual(plan.conflicts, []);
});

Deno.test("plan: a bridge port that is up is enslaved as it is", () => {
  const br = spec("br0", { create: { kind: "bridge", stp: false } });
  const plan = planLinks([br, spec("eth0", { master: "br0" })], [link("eth0", { up: true })]);
  assert.deepEqual(ops(plan.steps), ["create br0", "enslave eth0 br0"]);
});

Deno.test("plan: converged is no step; a missing port waits for its link", () => {
  const b = link("bond0", {
    kind: "bond",
    alias: MACHINED_ALIAS,
    bondMode: "802.3ad",
    miimon: 100,
  });
  const observed = [
    b,
    link("eth0", { masterIndex: b.index, up: true }),
    link("bond0.42", { kind: "vlan", alias: MACHINED_ALIAS, vlanId: 42, parentIndex: b.index }),
  ];
  assert.deepEqual(planLinks([bond, vlan, ...ports], observed), { steps: [], conflicts: [] });
});

Deno.test("plan: only machined's links are deleted when the config drops them", () => {
  const b = link("bond0", { kind: "bond", alias: MACHINED_ALIAS, bondMode: "802.3ad" });
  const observed = [
    b,
    link("bond0.42", { kind: "vlan", alias: MACHINED_ALIAS, vlanId: 42, parentIndex: b.index }),
    link("eth0", { masterIndex: b.index }),
    link("br9", { kind: "bridge" }), // someone else's
    link("eth5", { masterIndex: 0 }),
  ];
  observed[4].masterIndex = observed[3].index; // a port of someone else's bridge
  assert.deepEqual(ops(planLinks([], observed).steps), ["delete bond0.42", "delete bond0"]);
});

Deno.test("plan: a changed mode or VLAN id recreates machined's link; a foreign name conflicts", () => {
  const b = link("bond0", { kind: "bond", alias: MACHINED_ALIAS, bondMode: "active-backup" });
  const observed = [
    b,
    link("bond0.42", { kind: "vlan", alias: MACHINED_ALIAS, vlanId: 42, parentIndex: b.index }),
    link("eth0", { masterIndex: b.index }),
  ];
  const plan = planLinks([bond, vlan, ports[0]], observed);
  // The VLAN goes with its parent, and is made again on the new bond.
  assert.deepEqual(ops(plan.steps), [
    "delete bond0",
    "create bond0",
    "enslave eth0 bond0",
    "create bond0.42",
  ]);
  const v = planLinks([bond, vlan], [
    link("bond0", { kind: "bond", alias: MACHINED_ALIAS, bondMode: "802.3ad" }),
    link("bond0.42", { kind: "vlan", alias: MACHINED_ALIAS, vlanId: 7, parentIndex: next - 1 }),
  ]);
  assert.deepEqual(ops(v.steps), ["delete bond0.42", "create bond0.42"]);
  const foreign = planLinks([bond, ports[0]], [
    link("bond0", { kind: "bond", bondMode: "802.3ad" }),
    link("eth0", { up: true }),
  ]);
  assert.deepEqual(foreign, { steps: [], conflicts: [{ link: "bond0", kind: "bond" }] });
});

Deno.test("plan: a port dropped from machined's bond is released; a VLAN waits for its parent", () => {
  const b = link("bond0", { kind: "bond", alias: MACHINED_ALIAS, bondMode: "802.3ad" });
  const observed = [
    b,
    link("eth0", { masterIndex: b.index }),
    link("eth1", { masterIndex: b.index }),
  ];
  const plan = planLinks([
    bond,
    ports[0],
    spec("eth9.7", {
      create: { kind: "vlan", parent: "eth9", vlanId: 7 },
    }),
  ], observed);
  assert.deepEqual(ops(plan.steps), ["release eth1"]);
});

Deno.test("plan: a WireGuard link is created as machined's, kept, and deleted when unwanted; someone else's is a conflict", () => {
  const wg = spec("wg0", { create: { kind: "wireguard" } });
  const create = planLinks([wg], []).steps[0];
  assert.ok(create.op === "create");
  assert.deepEqual(create.spec, { name: "wg0", alias: MACHINED_ALIAS, kind: "wireguard" });
  const ours = link("wg0", { kind: "wireguard", alias: MACHINED_ALIAS });
  assert.deepEqual(planLinks([wg], [ours]).steps, []);
  assert.deepEqual(ops(planLinks([], [ours]).steps), ["delete wg0"]);
  const theirs = link("wg0", { kind: "wireguard" });
  assert.deepEqual(planLinks([wg], [theirs]).conflicts, [{ link: "wg0", kind: "wireguard" }]);
  assert.deepEqual(planLinks([], [theirs]).steps, [], "never deletes a link it did not make");
});
