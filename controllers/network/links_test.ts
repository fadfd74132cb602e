import assert from "node:assert/strict";
import { systemClock } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { configYaml, type NetworkTestEnv, networkTestEnv } from "./testing.ts";
import { resolvePort } from "./link_config.ts";
import { linkDetail } from "../../resources/mod.ts";

const LINKS = configYaml(`    bonds:
      - name: bond0
        mode: 802.3ad
        ports: [eth0, { mac: "52:54:00:00:00:02" }]
        lacp_rate: fast
        xmit_hash_policy: layer3+4
    vlans:
      - { parent: bond0, id: 42, addresses: ["10.42.0.2/24"] }
    bridges:
      - { name: br0, ports: [eth3], stp: true, addresses: ["10.3.0.2/24"] }
`);

async function withEnv(f: (env: NetworkTestEnv) => Promise<void>, autoDhcp = false) {
  const env = await networkTestEnv({ clock: systemClock, deps: { autoDhcp } });
  try {
    await f(env);
  } finally {
    await env.close();
  }
}

async function linkOf(env: NetworkTestEnv, name: string) {
  return (await env.backend.listLinks()).find((l) => l.name === name);
}

Deno.test("links: a bond by name and MAC, a VLAN on it with an address, a bridge, in status", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0", up: true });
    env.backend.addLink({ name: "eth1", mac: "52:54:00:00:00:02" });
    env.backend.addLink({ name: "eth3" });
    await env.setConfig(LINKS);
    env.start();
    await waitForResource(env.store, "AddressStatus", (r) => r.spec.address === "10.42.0.2");
    await waitForResource(env.store, "AddressStatus", (r) => r.spec.address === "10.3.0.2");
    const bond = await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "bond0" && r.spec.up,
    );
    assert.deepEqual(
      [bond.spec.kind, bond.spec.bondMode, bond.spec.ours],
      ["bond", "802.3ad", true],
    );
    const vlan = await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "bond0.42",
    );
    assert.deepEqual([vlan.spec.kind, vlan.spec.vlanId, vlan.spec.up], ["vlan", 42, true]);
    for (const port of ["eth0", "eth1"]) {
      await waitForResource(
        env.store,
        "LinkStatus",
        (r) => r.metadata.id === port && r.spec.master === "bond0" && r.spec.up,
      );
    }
    const br = await waitForResource(env.store, "LinkStatus", (r) => r.metadata.id === "br0");
    assert.equal(br.spec.stp, true);
    await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "eth3" && r.spec.master === "br0",
    );
    const b = await linkOf(env, "bond0");
    assert.deepEqual([b?.lacpRate, b?.xmitHashPolicy, b?.miimon], ["fast", "layer3+4", 100]);
    // The up port was set down before the bond took it (EPERM otherwise).
    const calls = env.backend.faults.callsOf("setLinkUp").map((c) => c.join(" "));
    assert.ok(calls.includes("eth0 false"), calls.join(", "));
    // Ports never run DHCP.
    assert.equal(env.store.list("DhcpLease").length, 0);
  }));

Deno.test("links: dropping them from the config removes only machined's links", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    env.backend.addLink({ name: "eth1", mac: "52:54:00:00:00:02" });
    env.backend.addLink({ name: "eth3" });
    await env.backend.createLink({ name: "br9", kind: "bridge" }); // someone else's
    await env.setConfig(LINKS);
    env.start();
    await waitForResource(env.store, "LinkStatus", (r) => r.metadata.id === "bond0.42");
    await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "eth3" && r.spec.master === "br0",
    );
    await env.setConfig(configYaml("    interfaces: []\n"));
    for (const name of ["bond0.42", "bond0", "br0"]) {
      await waitForAbsence(env.store, "LinkStatus", (r) => r.metadata.id === name);
    }
    await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "eth0" && r.spec.master === "",
    );
    assert.ok(await linkOf(env, "br9"), "someone else's bridge survives");
    assert.equal((await linkOf(env, "br9"))?.alias, undefined);
  }));

Deno.test("links: a foreign link with the bond's name is a typed error, left alone", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    await env.backend.createLink({ name: "bond0", kind: "bond", mode: "balance-rr" });
    await env.setConfig(
      configYaml(`    bonds: [{ name: bond0, mode: active-backup, ports: [eth0] }]\n`),
    );
    env.start();
    const s = await env.waitStats("network.LinkSpecController", (s) => s.lastError !== undefined);
    assert.match(String(s.lastError), /Cannot create bond "bond0" on link "bond0"/);
    assert.equal((await linkOf(env, "bond0"))?.bondMode, "balance-rr");
    assert.equal((await linkOf(env, "eth0"))?.masterIndex, undefined, "no port given to it");
  }));

Deno.test("links: a kernel without bonding answers EOPNOTSUPP, reported with the bond's name", () =>
  withEnv(async (env) => {
    env.backend.faults.failNext("createLink", "EOPNOTSUPP");
    env.backend.addLink({ name: "eth0" });
    await env.setConfig(
      configYaml(`    bonds: [{ name: bond0, mode: active-backup, ports: [eth0] }]\n`),
    );
    env.start();
    const s = await env.waitStats("network.LinkSpecController", (s) => s.lastError !== undefined);
    assert.match(String(s.lastError), /Cannot create bond "bond0".*EOPNOTSUPP/);
    // The runtime retries; the next attempt succeeds.
    await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "eth0" && r.spec.master === "bond0",
    );
  }));

Deno.test("links: auto-DHCP never picks a port, and not at all once links are configured", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    env.backend.addLink({ name: "eth1" });
    await env.setConfig(configYaml(`    bridges: [{ name: br0, ports: [eth0], dhcp: true }]\n`));
    env.start();
    await waitForResource(env.store, "LinkSpec", (r) => r.metadata.id === "br0" && r.spec.dhcp);
    const eth0 = await waitForResource(env.store, "LinkSpec", (r) => r.metadata.id === "eth0");
    assert.equal(eth0.spec.dhcp, false);
    assert.equal(eth0.spec.master, "br0");
    assert.equal(env.store.list("LinkSpec").some((r) => r.metadata.id === "eth1"), false);
  }, true));

Deno.test("Talos failure mode: MAC selectors for bond ports and bridges (each port chosen by its MAC)", () =>
  withEnv(async (env) => {
    // The kernel's names are not the config's: the ports are found by their MACs alone.
    env.backend.addLink({ name: "enp1s0", mac: "52:54:00:00:00:11" });
    env.backend.addLink({ name: "enp2s0", mac: "52:54:00:00:00:12" });
    env.backend.addLink({ name: "enp3s0", mac: "52:54:00:00:00:13" });
    await env.setConfig(configYaml(`    bonds:
      - name: bond0
        mode: active-backup
        ports: [{ mac: "52:54:00:00:00:11" }, { mac: "52:54:00:00:00:12" }]
    bridges:
      - { name: br0, ports: [{ mac: "52:54:00:00:00:13" }], addresses: ["10.3.0.2/24"] }
`));
    env.start();
    for (const [port, master] of [["enp1s0", "bond0"], ["enp2s0", "bond0"], ["enp3s0", "br0"]]) {
      await waitForResource(
        env.store,
        "LinkStatus",
        (r) => r.metadata.id === port && r.spec.master === master,
      );
    }
    await waitForResource(env.store, "AddressStatus", (r) => r.spec.address === "10.3.0.2");
  }));

Deno.test("Talos failure mode: a MAC selector matching a bond or VLAN that took the NIC's MAC (the NIC's own permanent MAC only)", () => {
  const base = {
    index: 1,
    type: "ether",
    mtu: 1500,
    up: true,
    operstate: "up",
    master: "",
    ours: false,
  };
  const links = [
    // A bond gave its second port the bond's (first port's) MAC; the NIC's own stays in permMac.
    {
      ...base,
      name: "eth1",
      kind: "",
      mac: "52:54:00:00:00:01",
      permMac: "52:54:00:00:00:02",
      physical: true,
    },
    { ...base, name: "bond0", kind: "bond", mac: "52:54:00:00:00:02", physical: false, ours: true },
    {
      ...base,
      name: "bond0.5",
      kind: "vlan",
      mac: "52:54:00:00:00:02",
      physical: false,
      ours: true,
    },
  ];
  assert.deepEqual(resolvePort({ mac: "52:54:00:00:00:02" }, links), ["eth1"]);
  assert.deepEqual(resolvePort({ mac: "52:54:00:00:00:09" }, links), []);
  assert.deepEqual(resolvePort("eth7", links), ["eth7"]);
});

Deno.test("links: a WireGuard interface is created with MTU 1420 and its address, and deleted when dropped", () =>
  withEnv(async (env) => {
    // The node's kernel has the module (the image loads it at boot).
    (env.backend.kinds as Set<string>).add("wireguard");
    await env.setConfig(configYaml(`    wireguard:
      - name: wg0
        private_key: KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=
        addresses: ["10.8.0.1/24"]
`));
    env.start();
    await waitForResource(env.store, "AddressStatus", (r) => r.spec.address === "10.8.0.1");
    const wg = await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "wg0" && r.spec.up,
    );
    assert.deepEqual([wg.spec.kind, wg.spec.mtu, wg.spec.ours], ["wireguard", 1420, true]);
    await env.setConfig(configYaml("    interfaces: []\n"));
    await waitForAbsence(env.store, "LinkStatus", (r) => r.metadata.id === "wg0");
  }));

Deno.test("links: an 802.3ad bond's LACP aggregator and partner show in its LinkStatus", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0", up: true });
    env.backend.addLink({ name: "eth1", mac: "52:54:00:00:00:02" });
    env.backend.addLink({ name: "eth3" });
    await env.setConfig(LINKS);
    env.start();
    await waitForResource(env.store, "LinkStatus", (r) => r.metadata.id === "bond0" && r.spec.up);
    env.backend.setLacp("bond0", { aggregator: 1, ports: 1, partnerMac: "00:00:00:00:00:00" });
    const alone = await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "bond0" && r.spec.lacp !== undefined,
    );
    assert.equal(linkDetail(alone.spec), "802.3ad, 1 ports, no partner");
    env.backend.setLacp("bond0", { aggregator: 2, ports: 2, partnerMac: "52:54:00:70:00:01" });
    const paired = await waitForResource(
      env.store,
      "LinkStatus",
      (r) => r.metadata.id === "bond0" && r.spec.lacp?.ports === 2,
    );
    assert.deepEqual(paired.spec.lacp, {
      aggregator: 2,
      ports: 2,
      partnerMac: "52:54:00:70:00:01",
    });
    assert.equal(linkDetail(paired.spec), "802.3ad, 2 ports, partner 52:54:00:70:00:01");
  }));
