/**
 * The network controllers against the native backend, meant to run only
 * inside the throwaway network namespace that `network_root_test.ts` creates
 * (with `ip netns exec`, MACHINED_NETNS set). Without that variable it
 * registers nothing, so it can never touch the host's interfaces. The
 * hostname is left to a fake identity backend: `ip netns exec` does not give
 * a private UTS namespace.
 * @module
 */
import assert from "node:assert/strict";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { configYaml } from "./testing.ts";
import { addrs, ip, routes, withNetwork } from "./netns_testing.ts";

/** The client end of the veth pair the outer test made; dnsmasq serves its peer. */
export const CLIENT_LINK = "mc0";

if (Deno.env.get("MACHINED_NETNS")) {
  Deno.test("static addresses, routes and MTU applied, then removed (only machined's)", async () => {
    await ip("link", "add", "mst0", "type", "veth", "peer", "name", "mst1");
    try {
      await ip("link", "set", "mst1", "up"); // carrier for mst0 once machined brings it up
      await ip("addr", "add", "10.88.0.9/24", "dev", "mst0"); // not machined's
      await withNetwork(
        {},
        configYaml(`    interfaces:
      - name: mst0
        mtu: 1400
        addresses: ["10.88.0.2/24", "fd88::2/64"]
        routes:
          - { to: 10.89.0.0/16, via: 10.88.0.1, metric: 100 }
`),
        async ({ store, setConfig }) => {
          await waitForResource(store, "RouteStatus", (r) => r.spec.dst === "10.89.0.0", 10_000);
          await waitForResource(store, "AddressStatus", (r) => r.spec.address === "fd88::2");
          assert.deepEqual(await addrs("mst0"), ["10.88.0.2/24", "10.88.0.9/24", "fd88::2/64"]);
          const [r] = await routes("10.89.0.0/16");
          assert.equal(r.gateway, "10.88.0.1");
          assert.equal(r.metric, 100);
          assert.equal(r.protocol, "static");
          const [link] = JSON.parse(await ip("-j", "link", "show", "mst0"));
          assert.equal(link.mtu, 1400);

          await setConfig(configYaml("    interfaces: []\n"));
          await waitForAbsence(store, "AddressStatus", (r) => r.spec.address === "10.88.0.2");
          await waitForAbsence(store, "RouteStatus", (r) => r.spec.dst === "10.89.0.0");
          await waitForResource(
            store,
            "LinkStatus",
            (r) => r.spec.name === "mst0" && r.spec.mtu === 1500 && !r.spec.up,
          );
          assert.deepEqual(await addrs("mst0"), ["10.88.0.9/24"]);
          assert.deepEqual(await routes("10.89.0.0/16"), []);
        },
      );
    } finally {
      await ip("link", "del", "mst0");
    }
  });

  Deno.test("DHCP from dnsmasq: address, default route and resolv.conf; RELEASE on stop", async () => {
    await withNetwork(
      { dhcpReplyTimeoutMs: 3000 },
      configYaml(`    interfaces:
      - name: ${CLIENT_LINK}
        dhcp: true
`),
      async ({ store, resolvConf, stop }) => {
        const lease = await waitForResource(
          store,
          "DhcpLease",
          (r) => r.spec.state === "bound",
          30_000,
        );
        assert.match(lease.spec.address!, /^10\.77\.0\.\d+$/);
        assert.equal(lease.spec.prefixLen, 24);
        assert.equal(lease.spec.leaseSeconds, 120);
        await waitForResource(
          store,
          "RouteStatus",
          (r) => r.spec.dstLen === 0 && r.spec.gateway === "10.77.0.1",
          10_000,
        );
        assert.deepEqual(await addrs(CLIENT_LINK), [`${lease.spec.address}/24`]);
        const [def] = await routes("default");
        assert.equal(def.gateway, "10.77.0.1");
        assert.equal(def.dev, CLIENT_LINK);
        assert.equal(def.protocol, "dhcp");
        assert.equal(def.metric, 1024);
        await waitForResource(store, "ResolverStatus", (r) => r.spec.nameservers.length > 0);
        const text = await Deno.readTextFile(resolvConf);
        assert.match(text, /^nameserver 10\.77\.0\.1$/m);
        assert.match(text, /^search test\.lan$/m);
        await stop();
        // The outer test checks dnsmasq's log for the DHCPRELEASE.
        console.log(`LEASED ${lease.spec.address}`);
      },
    );
  });
}
