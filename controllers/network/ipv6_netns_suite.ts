/**
 * IPv6 on the native backend, meant to run only inside the throwaway network
 * namespace that `ipv6_root_test.ts` creates (with `ip netns exec`,
 * MACHINED_NETNS set); without that variable it registers nothing, so it can
 * never touch the host's interfaces. dnsmasq sends router advertisements for
 * fd77::/64 on the peer of {@link CLIENT_LINK}.
 * @module
 */
import assert from "node:assert/strict";
import { waitForResource } from "../../runtime/testing.ts";
import { configYaml } from "./testing.ts";
import { addrs, withNetwork } from "./netns_testing.ts";

/** The client end of the veth pair the outer test made. */
export const CLIENT_LINK = "mc0";

const conf = (link: string, key: string) => `/proc/sys/net/ipv6/conf/${link}/${key}`;
const read = async (link: string, key: string) => (await Deno.readTextFile(conf(link, key))).trim();

if (Deno.env.get("MACHINED_NETNS")) {
  Deno.test("SLAAC from dnsmasq's router advertisements, set on the link only", async () => {
    // Off on the link, so that only machined's per-link setting can bring the address;
    // `default` and `all` get values the test can recognise afterwards.
    await Deno.writeTextFile(conf(CLIENT_LINK, "accept_ra"), "0\n");
    await Deno.writeTextFile(conf(CLIENT_LINK, "autoconf"), "0\n");
    await Deno.writeTextFile(conf("default", "accept_ra"), "0\n");
    const before = {
      default: [await read("default", "accept_ra"), await read("default", "autoconf")],
      all: [await read("all", "accept_ra"), await read("all", "autoconf")],
    };
    await withNetwork(
      {},
      configYaml(`    interfaces:
      - name: ${CLIENT_LINK}
        ipv6: { slaac: true }
        addresses: ["fd78::2/64"]
        routes:
          - { to: "fd79::/64", via: "fd78::1" }
`),
      async ({ store }) => {
        const slaac = await waitForResource(
          store,
          "AddressStatus",
          (r) => r.spec.link === CLIENT_LINK && r.spec.address.startsWith("fd77:"),
          20_000,
        );
        assert.equal(slaac.spec.prefixLen, 64);
        await waitForResource(store, "RouteStatus", (r) => r.spec.dst === "fd79::", 10_000);
        const seen = await addrs(CLIENT_LINK);
        assert.ok(seen.includes(`${slaac.spec.address}/64`), `ip shows ${seen.join(", ")}`);
        assert.ok(seen.includes("fd78::2/64"), `ip shows ${seen.join(", ")}`);
        assert.equal(await read(CLIENT_LINK, "accept_ra"), "2");
        assert.equal(await read(CLIENT_LINK, "autoconf"), "1");
        console.log(`SLAAC ${slaac.spec.address}`);
      },
    );
    assert.deepEqual(
      {
        default: [await read("default", "accept_ra"), await read("default", "autoconf")],
        all: [await read("all", "accept_ra"), await read("all", "autoconf")],
      },
      before,
      "`default` and `all` untouched",
    );
  });
}
