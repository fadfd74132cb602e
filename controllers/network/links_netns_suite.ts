/**
 * Bonds, VLANs and bridges made by the network controllers on the native
 * backend, run only inside the namespaces `links_root_test.ts` creates:
 * MACHINED_NETNS is this (the node's) namespace, MACHINED_PEER_NS the peer's,
 * joined by veth pairs the outer test made (`lk0`↔`lp0`, `lk1`↔`lp1`,
 * `lb0`↔`lq0`, `lb1`↔`lq1`). Without MACHINED_NETNS it registers nothing, so
 * the host's interfaces are never touched. Reachability is a TCP connection
 * to a listener in the peer namespace (no ping on the test host). Cases whose
 * kind this kernel lacks (bonding, 8021q) are registered as ignored, named.
 * @module
 */
import assert from "node:assert/strict";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { configYaml } from "./testing.ts";
import { ip, withNetwork } from "./netns_testing.ts";
import { DNSMASQ } from "./testing_ip.ts";

const peer = Deno.env.get("MACHINED_PEER_NS") ?? "";

/** Run `ip` in the peer namespace. */
const peerIp = (...args: string[]) => ip("-n", peer, ...args);

async function kernelHas(kind: string): Promise<boolean> {
  const made = await ip("link", "add", "lkprobe", "type", kind).then(() => true, () => false);
  if (made) await ip("link", "del", "lkprobe");
  return made;
}

async function vlanSupported(): Promise<boolean> {
  await ip("link", "add", "lkprobe", "type", "bridge");
  try {
    return await ip(
      "link",
      "add",
      "link",
      "lkprobe",
      "name",
      "lkprobe.2",
      "type",
      "vlan",
      "id",
      "2",
    )
      .then(() => true, () => false);
  } finally {
    await ip("link", "del", "lkprobe");
  }
}

/**
 * Connect over TCP to `address` in the peer namespace, retrying for `ms`:
 * a one-shot listener there answers "ok". True once a connection got it.
 */
async function reachable(address: string, ms = 15_000): Promise<boolean> {
  const port = 7000 + Math.floor(Math.random() * 1000);
  const server = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      peer,
      Deno.execPath(),
      "eval",
      `const l = Deno.listen({ hostname: "${address}", port: ${port} });
       for await (const c of l) { await c.write(new TextEncoder().encode("ok")); c.close(); }`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const deadline = performance.now() + ms;
    while (performance.now() < deadline) {
      try {
        const c = await Deno.connect({ hostname: address, port });
        const buf = new Uint8Array(2);
        const n = await c.read(buf);
        c.close();
        if (n === 2) return true;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    return false;
  } finally {
    server.kill("SIGKILL");
    await server.status;
  }
}

async function masterOf(link: string): Promise<string | undefined> {
  const [info] = JSON.parse(await ip("-j", "link", "show", "dev", link));
  return info.master;
}

async function macOf(link: string): Promise<string> {
  const [info] = JSON.parse(await ip("-j", "link", "show", "dev", link));
  return info.address;
}

async function exists(link: string): Promise<boolean> {
  return await ip("link", "show", "dev", link).then(() => true, () => false);
}

if (Deno.env.get("MACHINED_NETNS")) {
  const bond = await kernelHas("bond");
  const vlan = await vlanSupported();

  Deno.test("a bridge with two ports reaches the peer; dropping it removes only machined's links", async () => {
    await peerIp("addr", "add", "10.60.0.2/24", "dev", "lq0");
    await ip("link", "add", "other0", "type", "bridge"); // someone else's
    try {
      await withNetwork(
        {},
        configYaml(`    bridges:
      - { name: lkbr0, ports: [lb0, { mac: "${await macOf("lb1")}" }], addresses: ["10.60.0.1/24"] }
`),
        async ({ store, setConfig }) => {
          for (const port of ["lb0", "lb1"]) {
            await waitForResource(
              store,
              "LinkStatus",
              (r) => r.metadata.id === port && r.spec.master === "lkbr0",
              10_000,
            );
          }
          const br = await waitForResource(store, "LinkStatus", (r) => r.metadata.id === "lkbr0");
          assert.deepEqual([br.spec.kind, br.spec.ours, br.spec.stp], ["bridge", true, false]);
          const [link] = JSON.parse(await ip("-j", "-d", "link", "show", "dev", "lkbr0"));
          assert.equal(link.ifalias, "machined");
          assert.ok(await reachable("10.60.0.2"), "the peer answers through the bridge");

          await setConfig(configYaml("    interfaces: []\n"));
          await waitForAbsence(store, "LinkStatus", (r) => r.metadata.id === "lkbr0", 10_000);
          assert.equal(await exists("lkbr0"), false);
          assert.equal(await masterOf("lb0"), undefined, "ports released");
          assert.ok(await exists("other0"), "someone else's bridge survives");
        },
      );
    } finally {
      await ip("link", "del", "other0");
    }
  });

  Deno.test({
    name: "DHCP from dnsmasq on a bridge; its ports never ask" +
      (DNSMASQ ? "" : " (needs dnsmasq)"),
    ignore: !DNSMASQ,
    sanitizeResources: false, // dnsmasq's piped stderr is read to its end after kill
    async fn() {
      await peerIp("addr", "add", "10.61.0.1/24", "dev", "lq0");
      const server = new Deno.Command("ip", {
        args: [
          "netns",
          "exec",
          peer,
          DNSMASQ!,
          "--keep-in-foreground",
          "--conf-file=/dev/null",
          "--port=0",
          "--interface=lq0",
          "--bind-interfaces",
          "--user=root",
          "--group=root",
          "--dhcp-range=10.61.0.50,10.61.0.99,255.255.255.0,2m",
          "--dhcp-leasefile=/dev/null",
          "--pid-file=",
          "--log-dhcp",
          "--log-facility=-",
        ],
        stdout: "null",
        stderr: "piped",
      }).spawn();
      try {
        await withNetwork(
          { dhcpReplyTimeoutMs: 3000 },
          configYaml(`    bridges:
      - { name: lkbr1, ports: [lb0, lb1], dhcp: true }
`),
          async ({ store }) => {
            const lease = await waitForResource(
              store,
              "DhcpLease",
              (r) => r.spec.state === "bound",
              30_000,
            );
            assert.equal(lease.metadata.id, "lkbr1");
            assert.match(lease.spec.address!, /^10\.61\.0\.\d+$/);
            const leases = store.list("DhcpLease").map((r) => r.metadata.id);
            assert.deepEqual(leases, ["lkbr1"], "no DHCP client on a port");
          },
        );
      } finally {
        server.kill("SIGTERM");
        const log = new TextDecoder().decode((await server.output()).stderr);
        assert.doesNotMatch(log, /DHCPDISCOVER\(lq0\) [0-9a-f:]+ .*lb[01]/);
        await peerIp("addr", "del", "10.61.0.1/24", "dev", "lq0");
      }
    },
  });

  Deno.test({
    name: "an 802.3ad bond against a kernel bond peer, a VLAN on it reaching the peer's VLAN" +
      (bond && vlan ? "" : " (needs bonding, 8021q)"),
    ignore: !bond || !vlan,
    async fn() {
      await peerIp(
        "link",
        "add",
        "pbond",
        "type",
        "bond",
        "mode",
        "802.3ad",
        "miimon",
        "100",
        "lacp_rate",
        "fast",
      );
      for (const p of ["lp0", "lp1"]) {
        await peerIp("link", "set", p, "down"); // a bond refuses a port that is up
        await peerIp("link", "set", p, "master", "pbond");
      }
      await peerIp("link", "set", "pbond", "up");
      await peerIp("link", "add", "link", "pbond", "name", "pbond.42", "type", "vlan", "id", "42");
      await peerIp("addr", "add", "10.42.0.2/24", "dev", "pbond.42");
      await peerIp("link", "set", "pbond.42", "up");
      try {
        await withNetwork(
          {},
          configYaml(`    bonds:
      - { name: lkbond0, mode: 802.3ad, ports: [lk0, lk1], miimon: 100, lacp_rate: fast, xmit_hash_policy: layer3+4 }
    vlans:
      - { parent: lkbond0, id: 42, addresses: ["10.42.0.1/24"] }
`),
          async ({ store }) => {
            const v = await waitForResource(
              store,
              "LinkStatus",
              (r) => r.metadata.id === "lkbond0.42" && r.spec.operstate === "up",
              15_000,
            );
            assert.equal(v.spec.vlanId, 42);
            const b = await waitForResource(
              store,
              "LinkStatus",
              (r) => r.metadata.id === "lkbond0",
            );
            assert.equal(b.spec.bondMode, "802.3ad");
            assert.equal(await masterOf("lk0"), "lkbond0");
            assert.equal(await masterOf("lk1"), "lkbond0");
            assert.ok(
              await reachable("10.42.0.2", 30_000),
              "the peer's VLAN answers over the LACP bond",
            );
            // IFLA_BOND_AD_INFO: both ports aggregated, the peer's bond as partner.
            const peerMac = JSON.parse(await peerIp("-j", "link", "show", "pbond"))[0].address;
            await waitForResource(
              store,
              "LinkStatus",
              (r) =>
                r.metadata.id === "lkbond0" && r.spec.lacp?.ports === 2 &&
                r.spec.lacp.partnerMac === peerMac,
              15_000,
            );
          },
        );
      } finally {
        await peerIp("link", "del", "pbond");
        for (const p of ["lp0", "lp1"]) await peerIp("link", "set", p, "up");
      }
    },
  });

  Deno.test({
    name: "active-backup keeps the peer reachable when the first port's peer goes down" +
      (bond ? "" : " (needs bonding)"),
    ignore: !bond,
    async fn() {
      await peerIp("link", "add", "pbr", "type", "bridge");
      for (const p of ["lp0", "lp1"]) await peerIp("link", "set", p, "master", "pbr");
      await peerIp("addr", "add", "10.50.0.2/24", "dev", "pbr");
      await peerIp("link", "set", "pbr", "up");
      try {
        await withNetwork(
          {},
          configYaml(`    bonds:
      - { name: lkbond0, mode: active-backup, ports: [lk0, lk1], miimon: 100, addresses: ["10.50.0.1/24"] }
`),
          async ({ store }) => {
            await waitForResource(
              store,
              "LinkStatus",
              (r) => r.metadata.id === "lkbond0" && r.spec.operstate === "up",
              15_000,
            );
            assert.ok(await reachable("10.50.0.2"), "reachable through the first port");
            await peerIp("link", "set", "lp0", "down");
            assert.ok(await reachable("10.50.0.2"), "reachable through the second port");
          },
        );
      } finally {
        await peerIp("link", "del", "pbr");
        await peerIp("link", "set", "lp0", "up");
      }
    },
  });
}
