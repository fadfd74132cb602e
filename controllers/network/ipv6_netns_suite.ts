/**
 * IPv6 on the native backend, meant to run only inside the throwaway network
 * namespace that `ipv6_root_test.ts` creates (with `ip netns exec`,
 * MACHINED_NETNS set); without that variable it registers nothing, so it can
 * never touch the host's interfaces. dnsmasq sends router advertisements for
 * fd77::/64 and serves stateful DHCPv6 (fd76::/64) on the peer of
 * {@link CLIENT_LINK}.
 * @module
 */
import assert from "node:assert/strict";
import { waitForResource } from "../../runtime/testing.ts";
import { configYaml } from "./testing.ts";
import { addrs, ip, withNetwork } from "./netns_testing.ts";
import { NativeNetworkBackend } from "../../platform/network/mod.ts";
import { decodeDhcp6, DHCP6_OPT, DHCP6_TYPE, duidLl, encodeDhcp6 } from "./dhcp6_packet.ts";

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

  Deno.test("DHCPv6 socket and codec against dnsmasq: SOLICIT/ADVERTISE, REQUEST/REPLY (no client yet)", async () => {
    await ip("link", "set", CLIENT_LINK, "up");
    await linkLocalReady(CLIENT_LINK);
    const [link] = JSON.parse(await ip("-j", "link", "show", CLIENT_LINK));
    const clientId = duidLl(link.address);
    const socket = new NativeNetworkBackend().openDhcp6Socket(CLIENT_LINK);
    try {
      const exchange = async (type: number, extra: Partial<Parameters<typeof encodeDhcp6>[0]>) => {
        const transactionId = crypto.getRandomValues(new Uint8Array(3)).reduce((a, b) =>
          a * 256 + b
        );
        const msg = encodeDhcp6({
          type,
          transactionId,
          clientId,
          elapsed: 0,
          oro: [DHCP6_OPT.DNS_SERVERS],
          dnsServers: [],
          ...extra,
        });
        for (let attempt = 0; attempt < 5; attempt++) {
          await socket.send(msg, "ff02::1:2", 547);
          const d = await socket.receive(2_000);
          if (!d) continue;
          const reply = decodeDhcp6(d.data);
          if (reply.transactionId === transactionId) return { reply, from: d.from };
        }
        throw new Error(`no answer to DHCPv6 message type ${type} after 5 tries`);
      };
      const ad = await exchange(DHCP6_TYPE.SOLICIT, {
        iaNa: { iaid: 1, t1: 0, t2: 0, addresses: [] },
      });
      assert.equal(ad.reply.type, DHCP6_TYPE.ADVERTISE);
      assert.match(ad.from, /^fe80:/, "the server answers from its link-local address");
      const offered = ad.reply.iaNa?.addresses[0];
      assert.match(offered?.address ?? "", /^fd76::1[0-9a-f]{2}$/);
      const bound = await exchange(DHCP6_TYPE.REQUEST, {
        serverId: ad.reply.serverId,
        iaNa: { iaid: 1, t1: 0, t2: 0, addresses: [offered!] },
      });
      assert.equal(bound.reply.type, DHCP6_TYPE.REPLY);
      assert.equal(bound.reply.iaNa?.addresses[0]?.address, offered!.address);
      assert.equal(bound.reply.iaNa?.addresses[0]?.valid, 120);
      assert.deepEqual(bound.reply.dnsServers, ["fd77::1"]);
      console.log(`DHCPV6 ${offered!.address}`);
    } finally {
      socket.close();
    }
  });
}

if (Deno.env.get("MACHINED_NETNS")) {
  Deno.test("ipv6.dhcp through the controllers: a DHCPv6 lease from dnsmasq, its /128 and DNS", async () => {
    await withNetwork(
      {},
      configYaml(`    interfaces:
      - name: ${CLIENT_LINK}
        ipv6: { dhcp: true }
`),
      async ({ store }) => {
        const lease = await waitForResource(
          store,
          "Dhcp6Lease",
          (r) => r.spec.link === CLIENT_LINK && r.spec.state === "bound",
          30_000,
        );
        const address = lease.spec.address ?? "";
        assert.match(address, /^fd76::1[0-9a-f]{2}$/);
        assert.deepEqual(lease.spec.dnsServers, ["fd77::1"]);
        assert.equal(lease.spec.validSeconds, 120);
        await waitForResource(
          store,
          "AddressStatus",
          (r) => r.spec.link === CLIENT_LINK && r.spec.address === address,
          10_000,
        );
        const seen = await addrs(CLIENT_LINK);
        assert.ok(seen.includes(`${address}/128`), `ip shows ${seen.join(", ")}`);
        await waitForResource(
          store,
          "ResolverStatus",
          (r) => r.spec.nameservers.includes("fd77::1"),
          10_000,
        );
        console.log(`DHCPV6-CONTROLLER ${address}`);
      },
    );
  });
}

/** Wait (at most 10 s) until the link's link-local address has finished DAD. */
async function linkLocalReady(link: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [info] = JSON.parse(await ip("-j", "-6", "addr", "show", "dev", link, "scope", "link"));
    const ready = (info?.addr_info ?? []).some((a: { tentative?: boolean }) => !a.tentative);
    if (ready) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`link-local address on ${link} still tentative after 10 s`);
}
