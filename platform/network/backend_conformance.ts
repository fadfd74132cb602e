/**
 * One suite both network backends must pass: the fake always, the native
 * backend as root inside a throwaway network namespace. Each case gets a fresh
 * veth pair (`a` ↔ `b`, both down, no addresses) from the harness.
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { AddressInfo, NetworkEvent, RouteInfo } from "./backend.ts";
import { IFA_F, IFF, PROTO, SCOPE, TABLE } from "./backend.ts";
import { linkCases } from "./backend_conformance_links.ts";

export {
  type NetworkEnv,
  type NetworkHarness,
  rejectsSys,
  waitForEvent,
} from "./conformance_helpers.ts";
import {
  type NetworkEnv,
  type NetworkHarness,
  rejectsSys,
  waitForEvent,
} from "./conformance_helpers.ts";

async function link(env: NetworkEnv, name: string) {
  const l = (await env.backend.listLinks()).find((x) => x.name === name);
  assert.ok(l, `link ${name} listed`);
  return l;
}

async function addrsOf(env: NetworkEnv, name: string): Promise<AddressInfo[]> {
  const { index } = await link(env, name);
  return (await env.backend.listAddresses()).filter((a) => a.index === index);
}

async function mainRoutes(env: NetworkEnv): Promise<RouteInfo[]> {
  return (await env.backend.listRoutes()).filter((r) => r.table !== TABLE.LOCAL);
}

async function bothUp(env: NetworkEnv) {
  await env.backend.setLinkUp(env.a, true);
  await env.backend.setLinkUp(env.b, true);
}

type Case = [string, (env: NetworkEnv) => Promise<void>];

/** The cases, in order. */
export const networkCases: Case[] = [
  ["lists a veth pair with its attributes", async (env) => {
    const a = await link(env, env.a), b = await link(env, env.b);
    assert.equal(a.kind, "veth");
    assert.equal(a.mtu, 1500);
    assert.equal(a.up, false);
    assert.equal(a.operstate, "down");
    assert.equal(a.parentIndex, b.index);
    assert.equal(b.parentIndex, a.index);
    assert.match(a.mac ?? "", /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    assert.equal(a.hwType, 1);
  }],

  ["sets links up and down, idempotently, with events", async (env) => {
    const sub = env.backend.subscribe(["link"]);
    try {
      // Operstate follows asynchronously (the kernel's linkwatch), so wait for it.
      const state = (name: string, op: string) => (e: NetworkEvent) =>
        e.kind === "link" && e.link.name === name && e.link.operstate === op;
      await env.backend.setLinkUp(env.a, true);
      await waitForEvent(sub, state(env.a, "lowerlayerdown"));
      assert.equal((await link(env, env.a)).up, true);
      await env.backend.setLinkUp(env.a, true);
      await env.backend.setLinkUp(env.b, true);
      await waitForEvent(sub, state(env.a, "up"));
      const a = await link(env, env.a);
      assert.ok(a.flags & IFF.RUNNING && a.flags & IFF.LOWER_UP);
      await env.backend.setLinkUp(env.a, false);
      await waitForEvent(sub, state(env.b, "lowerlayerdown"));
      assert.equal((await link(env, env.a)).operstate, "down");
      assert.equal((await link(env, env.a)).up, false);
    } finally {
      sub.close();
    }
  }],

  ["sets the MTU within the device's range", async (env) => {
    await env.backend.setLinkMtu(env.a, 1400);
    await env.backend.setLinkMtu(env.a, 1400);
    assert.equal((await link(env, env.a)).mtu, 1400);
    await rejectsSys(env.backend.setLinkMtu(env.a, 50), "EINVAL", "RTM_SETLINK");
    await rejectsSys(env.backend.setLinkMtu(env.a, 70000), "EINVAL");
  }],

  ["names a missing link with ENODEV", async (env) => {
    await rejectsSys(env.backend.setLinkMtu("nosuch0", 1400), "ENODEV", "RTM_SETLINK");
    await rejectsSys(env.backend.setLinkUp("nosuch0", true), "ENODEV");
    await rejectsSys(
      env.backend.addAddress({ link: "nosuch0", address: "10.0.0.1", prefixLen: 24 }),
      "ENODEV",
      "RTM_NEWADDR",
    );
    await rejectsSys(
      env.backend.addRoute({ family: "inet", dst: "10.1.0.0", dstLen: 24, link: "nosuch0" }),
      "ENODEV",
    );
    assert.throws(() => env.backend.openDhcpSocket("nosuch0"), (e) => isSysError(e, "ENODEV"));
  }],

  ["adds and deletes IPv4 addresses with their connected routes", async (env) => {
    await bothUp(env);
    const sub = env.backend.subscribe(["ipv4-address"]);
    try {
      const spec = { link: env.a, address: "10.0.0.1", prefixLen: 24 };
      await env.backend.addAddress(spec);
      await waitForEvent(sub, (e) => e.kind === "address" && e.address.address === "10.0.0.1");
      await rejectsSys(env.backend.addAddress(spec), "EEXIST", "RTM_NEWADDR");
      await env.backend.addAddress({ link: env.a, address: "10.0.0.1", prefixLen: 16 });
      await env.backend.addAddress({ link: env.a, address: "10.0.0.2", prefixLen: 24 });
      const v4 = (await addrsOf(env, env.a)).filter((a) => a.family === "inet");
      const first = v4.find((a) => a.address === "10.0.0.1" && a.prefixLen === 24)!;
      assert.equal(first.label, env.a);
      assert.equal(first.scope, SCOPE.UNIVERSE);
      assert.ok(first.flags & IFA_F.PERMANENT);
      assert.equal(first.flags & IFA_F.SECONDARY, 0);
      const second = v4.find((a) => a.address === "10.0.0.2")!;
      assert.ok(second.flags & IFA_F.SECONDARY);
      const { index } = await link(env, env.a);
      const connected = (await mainRoutes(env)).find((r) =>
        r.dst === "10.0.0.0" && r.dstLen === 24 && r.oif === index
      );
      assert.ok(connected, "connected route");
      assert.equal(connected.protocol, PROTO.KERNEL);
      assert.equal(connected.scope, SCOPE.LINK);
      assert.equal(connected.prefsrc, "10.0.0.1");
      await env.backend.deleteAddress({ link: env.a, address: "10.0.0.2", prefixLen: 24 });
      await rejectsSys(
        env.backend.deleteAddress({ link: env.a, address: "10.0.0.2", prefixLen: 24 }),
        "EADDRNOTAVAIL",
        "RTM_DELADDR",
      );
      await rejectsSys(
        env.backend.deleteAddress({ link: env.a, address: "10.0.0.1", prefixLen: 25 }),
        "EADDRNOTAVAIL",
      );
      await env.backend.deleteAddress(spec);
      await waitForEvent(
        sub,
        (e) =>
          e.kind === "address" && e.removed && e.address.address === "10.0.0.1" &&
          e.address.prefixLen === 24,
      );
      const left = (await mainRoutes(env)).filter((r) => r.dst === "10.0.0.0" && r.dstLen === 24);
      assert.deepEqual(left, []);
    } finally {
      sub.close();
    }
  }],

  ["adds and deletes IPv6 addresses", async (env) => {
    await bothUp(env);
    const spec = { link: env.a, address: "fd00::1", prefixLen: 64, flags: IFA_F.NODAD };
    await env.backend.addAddress(spec);
    await rejectsSys(env.backend.addAddress({ ...spec, prefixLen: 80 }), "EEXIST");
    const a = (await addrsOf(env, env.a)).find((x) => x.address === "fd00::1")!;
    assert.equal(a.family, "inet6");
    assert.equal(a.scope, SCOPE.UNIVERSE);
    assert.ok(a.flags & IFA_F.NODAD);
    assert.equal(a.flags & IFA_F.TENTATIVE, 0);
    const r = (await mainRoutes(env)).find((x) => x.dst === "fd00::" && x.dstLen === 64)!;
    assert.equal(r.metric, 256);
    await rejectsSys(env.backend.deleteAddress({ ...spec, prefixLen: 48 }), "EADDRNOTAVAIL");
    await env.backend.deleteAddress(spec);
    assert.equal((await addrsOf(env, env.a)).some((x) => x.address === "fd00::1"), false);
  }],

  ["adds and deletes IPv4 routes with metric and table", async (env) => {
    await bothUp(env);
    await env.backend.addAddress({ link: env.a, address: "10.0.0.1", prefixLen: 24 });
    const { index } = await link(env, env.a);
    const sub = env.backend.subscribe(["ipv4-route"]);
    try {
      const gw = { family: "inet" as const, dst: "10.9.0.0", dstLen: 24, gateway: "10.0.0.254" };
      await env.backend.addRoute({ ...gw, metric: 50 });
      await waitForEvent(sub, (e) => e.kind === "route" && e.route.dst === "10.9.0.0");
      await rejectsSys(
        env.backend.addRoute({ ...gw, gateway: "10.0.0.253", metric: 50 }),
        "EEXIST",
        "RTM_NEWROUTE",
      );
      await env.backend.addRoute({ ...gw, gateway: "10.0.0.253", metric: 60 });
      await rejectsSys(
        env.backend.addRoute({ ...gw, gateway: "192.168.77.1", metric: 70 }),
        "ENETUNREACH",
      );
      await env.backend.addRoute({ family: "inet", gateway: "10.0.0.254" });
      await env.backend.addRoute({
        family: "inet",
        dst: "10.7.0.0",
        dstLen: 24,
        link: env.a,
        table: 1000,
      });
      const routes = await mainRoutes(env);
      const r50 = routes.find((r) => r.dst === "10.9.0.0" && r.metric === 50)!;
      assert.deepEqual(
        [r50.gateway, r50.oif, r50.table, r50.protocol, r50.scope, r50.type],
        ["10.0.0.254", index, TABLE.MAIN, PROTO.STATIC, SCOPE.UNIVERSE, 1],
      );
      const def = routes.find((r) => r.family === "inet" && r.dst === undefined)!;
      assert.equal(def.dstLen, 0);
      assert.equal(def.metric, undefined);
      const t = routes.find((r) => r.table === 1000)!;
      assert.equal(t.scope, SCOPE.LINK);
      assert.equal(t.oif, index);
      await rejectsSys(
        env.backend.deleteRoute({ ...gw, metric: 70 }),
        "ESRCH",
        "RTM_DELROUTE",
      );
      await env.backend.deleteRoute({ ...gw, gateway: "10.0.0.253", metric: 60 });
      await env.backend.deleteRoute({ family: "inet", dst: "10.9.0.0", dstLen: 24 });
      await rejectsSys(
        env.backend.deleteRoute({ family: "inet", dst: "10.7.0.0", dstLen: 24 }),
        "ESRCH",
      );
      await env.backend.deleteRoute({ family: "inet", dst: "10.7.0.0", dstLen: 24, table: 1000 });
      await waitForEvent(sub, (e) => e.kind === "route" && e.removed && e.route.table === 1000);
      assert.equal((await mainRoutes(env)).some((r) => r.dst === "10.9.0.0"), false);
    } finally {
      sub.close();
    }
  }],

  ["adds and deletes IPv6 routes", async (env) => {
    await bothUp(env);
    await env.backend.addAddress({
      link: env.a,
      address: "fd00::1",
      prefixLen: 64,
      flags: IFA_F.NODAD,
    });
    const base = { family: "inet6" as const, dst: "fd01::", dstLen: 64 };
    await env.backend.addRoute({ ...base, gateway: "fd00::fe" });
    await rejectsSys(env.backend.addRoute({ ...base, gateway: "fd00::fd" }), "EEXIST");
    await rejectsSys(
      env.backend.addRoute({ ...base, dst: "fd02::", gateway: "fd99::1" }),
      "EHOSTUNREACH",
    );
    await rejectsSys(
      env.backend.addRoute({ ...base, dst: "fd02::", gateway: "fe80::1" }),
      "EINVAL",
    );
    await env.backend.addRoute({ ...base, dst: "fd02::", gateway: "fe80::1", link: env.a });
    const r = (await mainRoutes(env)).find((x) => x.dst === "fd01::")!;
    assert.equal(r.metric, 1024);
    assert.equal(r.gateway, "fd00::fe");
    assert.equal(r.protocol, PROTO.STATIC);
    await env.backend.deleteRoute(base);
    await rejectsSys(env.backend.deleteRoute(base), "ESRCH");
    await env.backend.deleteRoute({ ...base, dst: "fd02::", link: env.a });
  }],

  ["a link going down flushes its routes and IPv6 addresses", async (env) => {
    await bothUp(env);
    await env.backend.addAddress({ link: env.a, address: "10.0.0.1", prefixLen: 24 });
    await env.backend.addAddress({
      link: env.a,
      address: "fd00::1",
      prefixLen: 64,
      flags: IFA_F.NODAD,
    });
    await env.backend.addRoute({ family: "inet", dst: "10.9.0.0", dstLen: 24, link: env.a });
    const { index } = await link(env, env.a);
    await env.backend.setLinkUp(env.a, false);
    assert.deepEqual((await mainRoutes(env)).filter((r) => r.oif === index), []);
    const left = await addrsOf(env, env.a);
    assert.deepEqual(left.map((a) => a.address), ["10.0.0.1"]);
    await env.backend.setLinkUp(env.a, true);
    assert.ok((await mainRoutes(env)).some((r) => r.dst === "10.0.0.0" && r.oif === index));
  }],

  ["closing a subscription wakes a pending wait", async (env) => {
    const sub = env.backend.subscribe(["link", "ipv4-address", "ipv6-address"]);
    const pending = sub.nextEvent(10_000);
    const t0 = performance.now();
    sub.close();
    assert.equal(await pending, undefined);
    assert.ok(performance.now() - t0 < 2000);
    assert.equal(await sub.nextEvent(10), undefined);
  }],

  ["DHCP socket exchanges broadcasts across an unconfigured veth pair", async (env) => {
    const client = env.backend.openDhcpSocket(env.a, 68);
    const server = env.backend.openDhcpSocket(env.b, 67);
    try {
      await rejectsSys(client.send(new Uint8Array([1])), "ENETUNREACH", "sendto");
      await bothUp(env);
      // Let the veth carrier settle before the first packet.
      await waitForRunning(env);
      assert.equal(await client.receive(50), undefined);
      const discover = new TextEncoder().encode("DISCOVER");
      await client.send(discover);
      const got = await server.receive(3000);
      assert.ok(got, "server received");
      assert.deepEqual(got.data, discover);
      assert.equal(got.from, "0.0.0.0");
      assert.equal(got.port, 68);
      await server.send(new TextEncoder().encode("OFFER"), "255.255.255.255", 68);
      const offer = await client.receive(3000);
      assert.ok(offer, "client received");
      assert.equal(new TextDecoder().decode(offer.data), "OFFER");
      assert.equal(offer.port, 67);
    } finally {
      client.close();
      server.close();
    }
  }],
  [
    "per-link IPv6 settings are written on the link only; default and all are refused",
    async (env) => {
      const before = await env.backend.getIpv6Conf(env.b, "accept_ra");
      await env.backend.setIpv6Conf(env.a, "accept_ra", 2);
      await env.backend.setIpv6Conf(env.a, "autoconf", 0);
      assert.equal(await env.backend.getIpv6Conf(env.a, "accept_ra"), 2);
      assert.equal(await env.backend.getIpv6Conf(env.a, "autoconf"), 0);
      assert.equal(await env.backend.getIpv6Conf(env.b, "accept_ra"), before, "the peer untouched");
      for (const name of ["default", "all"]) {
        await assert.rejects(() => env.backend.setIpv6Conf(name, "accept_ra", 2), RangeError);
        await assert.rejects(() => env.backend.getIpv6Conf(name, "accept_ra"), RangeError);
      }
      await rejectsSys(env.backend.setIpv6Conf("nosuch0", "accept_ra", 2), "ENODEV");
    },
  ],
];

async function waitForRunning(env: NetworkEnv): Promise<void> {
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline) {
    const links = await env.backend.listLinks();
    if ([env.a, env.b].every((n) => links.find((l) => l.name === n)?.operstate === "up")) return;
    const sub = env.backend.subscribe(["link"]);
    try {
      await sub.nextEvent(200);
    } finally {
      sub.close();
    }
  }
  throw new Error("links did not come up");
}

/**
 * Register every case as a Deno test named `<prefix>: <case>`; a link case
 * whose kinds the harness lacks is registered as ignored, naming them.
 */
export function registerNetworkConformance(prefix: string, harness: NetworkHarness): void {
  const all = [
    ...networkCases.map(([name, run]) => ({ name, run, needs: [] as readonly string[] })),
    ...linkCases,
  ];
  for (const { name, run, needs } of all) {
    const missing = needs.filter((k) => !harness.kinds.has(k));
    Deno.test({
      name: `${prefix}: ${name}` + (missing.length ? ` (needs ${missing.join(", ")})` : ""),
      ignore: missing.length > 0,
      async fn() {
        const env = await harness.setup();
        try {
          await run(env);
        } finally {
          await harness.teardown(env);
        }
      },
    });
  }
}
