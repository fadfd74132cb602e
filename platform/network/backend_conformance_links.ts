/**
 * Conformance cases for virtual links (bridges, bonds, VLANs): creation with
 * the kind's options, enslaving in the order the kernel requires, deletion.
 * Each case names the kinds it needs; the harness says which its kernel has,
 * and a case whose kind is missing is registered as ignored, never passed.
 * @module
 */
import assert from "node:assert/strict";
import type { LinkInfo, NetworkEvent } from "./backend.ts";
import { MACHINED_ALIAS } from "./backend.ts";
import { type NetworkEnv, rejectsSys, waitForEvent } from "./conformance_helpers.ts";

/** A case with the link kinds it needs. */
export interface LinkCase {
  name: string;
  needs: readonly string[];
  run(env: NetworkEnv): Promise<void>;
}

async function find(env: NetworkEnv, name: string): Promise<LinkInfo | undefined> {
  return (await env.backend.listLinks()).find((l) => l.name === name);
}

async function get(env: NetworkEnv, name: string): Promise<LinkInfo> {
  const l = await find(env, name);
  assert.ok(l, `link ${name} listed`);
  return l;
}

/** Run `f`, then delete `names` if they still exist (cases clean up what they made). */
async function withLinks(env: NetworkEnv, names: string[], f: () => Promise<void>) {
  try {
    await f();
  } finally {
    for (const n of names) if (await find(env, n)) await env.backend.deleteLink(n);
  }
}

/** The cases, in order. */
export const linkCases: LinkCase[] = [
  {
    name:
      "creates a marked WireGuard link (MTU 1420, no keys yet), refuses its name twice, deletes it",
    needs: ["wireguard"],
    run: (env) =>
      withLinks(env, ["mtwg0"], async () => {
        await env.backend.createLink({ name: "mtwg0", kind: "wireguard", alias: MACHINED_ALIAS });
        await rejectsSys(
          env.backend.createLink({ name: "mtwg0", kind: "wireguard" }),
          "EEXIST",
          "RTM_NEWLINK",
        );
        const wg = await get(env, "mtwg0");
        assert.deepEqual([wg.kind, wg.mtu, wg.alias, wg.up], [
          "wireguard",
          1420,
          MACHINED_ALIAS,
          false,
        ]);
        await env.backend.deleteLink("mtwg0");
        assert.equal(await find(env, "mtwg0"), undefined);
      }),
  },
  {
    name: "creates a marked bridge with STP, enslaves and releases a port, deletes it",
    needs: ["bridge"],
    run: (env) =>
      withLinks(env, ["mtbr0", "mtbr1"], async () => {
        await env.backend.createLink({
          name: "mtbr0",
          kind: "bridge",
          stp: true,
          alias: MACHINED_ALIAS,
        });
        await rejectsSys(
          env.backend.createLink({ name: "mtbr0", kind: "bridge" }),
          "EEXIST",
          "RTM_NEWLINK",
        );
        const br = await get(env, "mtbr0");
        assert.deepEqual([br.kind, br.stp, br.alias, br.up], [
          "bridge",
          true,
          MACHINED_ALIAS,
          false,
        ]);
        await env.backend.createLink({ name: "mtbr1", kind: "bridge" });
        const other = await get(env, "mtbr1");
        assert.deepEqual([other.stp, other.alias], [false, undefined]);
        await env.backend.setLinkMaster(env.a, "mtbr0");
        await env.backend.setLinkMaster(env.a, "mtbr0");
        assert.equal((await get(env, env.a)).masterIndex, br.index);
        await rejectsSys(env.backend.setLinkMaster(env.a, env.b), "EOPNOTSUPP", "RTM_SETLINK");
        await rejectsSys(env.backend.setLinkMaster("mtbr1", "mtbr0"), "ELOOP");
        await env.backend.setLinkMaster(env.a, "mtbr1");
        assert.equal((await get(env, env.a)).masterIndex, other.index, "moved");
        await env.backend.setLinkMaster(env.a, undefined);
        await env.backend.setLinkMaster(env.a, undefined);
        assert.equal((await get(env, env.a)).masterIndex, undefined);
        await rejectsSys(env.backend.setLinkMaster(env.a, "nosuch0"), "ENODEV");
        await env.backend.setLinkMaster(env.a, "mtbr0");
        await env.backend.deleteLink("mtbr0");
        assert.equal(await find(env, "mtbr0"), undefined);
        assert.equal((await get(env, env.a)).masterIndex, undefined, "released by the deletion");
        await rejectsSys(env.backend.deleteLink("mtbr0"), "ENODEV", "RTM_DELLINK");
      }),
  },
  {
    name: "a bridge is up once a port has carrier",
    needs: ["bridge"],
    run: (env) =>
      withLinks(env, ["mtbr0"], async () => {
        await env.backend.createLink({ name: "mtbr0", kind: "bridge" });
        await env.backend.setLinkMaster(env.a, "mtbr0");
        const sub = env.backend.subscribe(["link"]);
        try {
          await env.backend.setLinkUp("mtbr0", true);
          await env.backend.setLinkUp(env.a, true);
          await env.backend.setLinkUp(env.b, true);
          await waitForEvent(sub, (e: NetworkEvent) =>
            e.kind === "link" && e.link.name === "mtbr0" && e.link.operstate === "up");
        } finally {
          sub.close();
        }
      }),
  },
  {
    name: "creates a bond with its options; a port must be down to be enslaved",
    needs: ["bond"],
    run: (env) =>
      withLinks(env, ["mtbond0"], async () => {
        await env.backend.createLink({
          name: "mtbond0",
          kind: "bond",
          mode: "802.3ad",
          miimon: 100,
          lacpRate: "fast",
          xmitHashPolicy: "layer3+4",
        });
        const bond = await get(env, "mtbond0");
        assert.deepEqual(
          [bond.kind, bond.bondMode, bond.miimon, bond.lacpRate, bond.xmitHashPolicy],
          ["bond", "802.3ad", 100, "fast", "layer3+4"],
        );
        await env.backend.setLinkUp(env.a, true);
        await rejectsSys(env.backend.setLinkMaster(env.a, "mtbond0"), "EPERM", "RTM_SETLINK");
        await env.backend.setLinkUp(env.a, false);
        await env.backend.setLinkMaster(env.a, "mtbond0");
        const port = await get(env, env.a);
        assert.equal(port.masterIndex, bond.index);
        assert.equal(port.up, true, "the bond opens its port");
        await env.backend.setLinkMaster(env.a, undefined);
      }),
  },
  {
    name: "creates a VLAN on a parent; it goes with its parent",
    needs: ["vlan", "bridge"],
    run: (env) =>
      withLinks(env, ["mtbr0"], async () => {
        await env.backend.createLink({ name: "mtbr0", kind: "bridge" });
        await env.backend.createLink({
          name: "mtbr0.42",
          kind: "vlan",
          parent: "mtbr0",
          vlanId: 42,
          alias: MACHINED_ALIAS,
        });
        const br = await get(env, "mtbr0"), vlan = await get(env, "mtbr0.42");
        assert.deepEqual(
          [vlan.kind, vlan.vlanId, vlan.parentIndex, vlan.alias, vlan.mac],
          ["vlan", 42, br.index, MACHINED_ALIAS, br.mac],
        );
        await rejectsSys(
          env.backend.createLink({ name: "mtv0", kind: "vlan", parent: "nosuch0", vlanId: 5 }),
          "ENODEV",
          "RTM_NEWLINK",
        );
        await env.backend.deleteLink("mtbr0");
        assert.equal(await find(env, "mtbr0.42"), undefined);
      }),
  },
];
