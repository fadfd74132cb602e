/**
 * Privileged: SLAAC against real router advertisements. Needs root (network
 * namespaces, veth pairs, CAP_NET_ADMIN), the native addon and dnsmasq (it
 * sends the RAs and serves DHCPv6). Two throwaway namespaces joined by a veth
 * pair: dnsmasq advertises fd77::/64 (`ra-only`) and leases fd76::100-1ff
 * (stateful, DNS fd77::1) on `ms0` in one, and
 * `ipv6_netns_suite.ts` runs the controllers on `mc0` in the other, so the
 * host's interfaces are never touched. Both namespaces are deleted afterwards.
 */
import assert from "node:assert/strict";
import { addVethPair, DNSMASQ, ip, stopForLog, testInNamespace } from "./testing_ip.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "IPv6 in a namespace: SLAAC from dnsmasq's RAs, accept_ra on the link only; " +
    "a DHCPv6 exchange over the native socket; ipv6.dhcp through the controllers " +
    "(needs root, the native addon, dnsmasq)",
  ignore: !root || !haveAddon || !DNSMASQ,
  sanitizeResources: false, // dnsmasq's piped stderr is read to its end after kill
  async fn() {
    const tag = crypto.randomUUID().slice(0, 6);
    const client = `machined-6c-${tag}`, server = `machined-6s-${tag}`;
    await ip("netns", "add", client);
    await ip("netns", "add", server);
    let ra: Deno.ChildProcess | undefined;
    try {
      await addVethPair(client, server);
      await ip("-n", server, "addr", "add", "fd77::1/64", "dev", "ms0", "nodad");
      await ip("-n", server, "addr", "add", "fd76::1/64", "dev", "ms0", "nodad");
      await ip("-n", server, "link", "set", "ms0", "up");
      await ip("-n", server, "link", "set", "lo", "up");
      ra = new Deno.Command("ip", {
        args: [
          "netns",
          "exec",
          server,
          DNSMASQ!,
          "--keep-in-foreground",
          "--conf-file=/dev/null",
          "--port=0",
          "--interface=ms0",
          "--bind-interfaces",
          "--user=root",
          "--group=root",
          "--enable-ra",
          "--ra-param=ms0,3", // an unsolicited RA every 3 s
          "--dhcp-range=::,constructor:ms0,ra-only,64,2m",
          "--dhcp-range=fd76::100,fd76::1ff,64,2m", // stateful DHCPv6
          "--dhcp-option=option6:dns-server,[fd77::1]",
          "--log-dhcp",
          "--dhcp-leasefile=/dev/null",
          "--pid-file=",
          "--log-facility=-",
        ],
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const out = await testInNamespace(client, new URL("./ipv6_netns_suite.ts", import.meta.url));
      const text = out.text;
      const log = await stopForLog(ra);
      ra = undefined;
      if (!out.success) console.error(text, "\n--- dnsmasq ---\n", log);
      assert.ok(out.success, "the suite inside the namespace failed (output above)");
      assert.match(text, /ok \| 3 passed \| 0 failed \(/, "all ran: none failed or ignored");
      assert.match(text, /SLAAC fd77:/, "the suite reports the SLAAC address");
      const leased = /DHCPV6 (\S+)/.exec(text)?.[1];
      assert.ok(leased, "the suite reports the DHCPv6 address");
      assert.match(log, new RegExp(`DHCPREPLY\\(ms0\\) ${leased.replaceAll(":", "\\:")}`));
      const managed = /DHCPV6-CONTROLLER (\S+)/.exec(text)?.[1];
      assert.ok(managed, "the controllers report their DHCPv6 address");
      assert.match(log, new RegExp(`DHCPREPLY\\(ms0\\) ${managed.replaceAll(":", "\\:")}`));
    } finally {
      if (ra) {
        ra.kill("SIGKILL");
        await ra.status;
      }
      await ip("netns", "del", client).catch(() => {});
      await ip("netns", "del", server).catch(() => {});
    }
  },
});

if (!root) console.log("skipping IPv6 root tests: not root");
else if (!haveAddon) console.log("skipping IPv6 root tests: addon not built");
else if (!DNSMASQ) console.log("skipping IPv6 root tests: dnsmasq not installed");
