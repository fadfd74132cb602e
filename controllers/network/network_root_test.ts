/**
 * Privileged: the network controllers against rtnetlink and a real DHCP
 * server. Needs root (network namespaces, veth pairs, CAP_NET_ADMIN) and
 * dnsmasq (Debian `dnsmasq-base`). Two throwaway namespaces joined by a veth
 * pair: dnsmasq serves 10.77.0.0/24 on `ms0` in one, and `netns_suite.ts`
 * runs the controllers on `mc0` in the other, so the host's interfaces are
 * never touched. Both namespaces are deleted afterwards.
 */
import assert from "node:assert/strict";
import { addVethPair, DNSMASQ, ip, stopForLog, testInNamespace } from "./testing_ip.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "network controllers in a namespace: static config, and a DHCP lease from dnsmasq " +
    "(needs root, the native addon, dnsmasq)",
  ignore: !root || !haveAddon || !DNSMASQ,
  sanitizeResources: false, // dnsmasq's piped stderr is read to its end after kill
  async fn() {
    const tag = crypto.randomUUID().slice(0, 6);
    const client = `machined-nc-${tag}`, server = `machined-ns-${tag}`;
    const dir = await Deno.makeTempDir({ prefix: "machined-dnsmasq-" });
    await ip("netns", "add", client);
    await ip("netns", "add", server);
    let dhcpd: Deno.ChildProcess | undefined;
    try {
      await addVethPair(client, server);
      await ip("-n", server, "addr", "add", "10.77.0.1/24", "dev", "ms0");
      await ip("-n", server, "link", "set", "ms0", "up");
      await ip("-n", server, "link", "set", "lo", "up");
      dhcpd = new Deno.Command("ip", {
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
          "--dhcp-range=10.77.0.50,10.77.0.99,255.255.255.0,2m",
          "--dhcp-option=option:router,10.77.0.1",
          "--dhcp-option=option:dns-server,10.77.0.1",
          "--domain=test.lan",
          "--dhcp-leasefile=/dev/null",
          "--pid-file=",
          "--log-dhcp",
          "--log-facility=-",
        ],
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const out = await testInNamespace(client, new URL("./netns_suite.ts", import.meta.url));
      const text = out.text;
      const log = await stopForLog(dhcpd);
      dhcpd = undefined;
      if (!out.success) console.error(text, "\n--- dnsmasq ---\n", log);
      assert.ok(out.success, "the suite inside the namespace failed (output above)");
      assert.match(text, /ok \| 2 passed \| 0 failed \(/, "all ran: none failed or ignored");
      const leased = /LEASED (\S+)/.exec(text)?.[1];
      assert.ok(leased, "the suite reports the leased address");
      assert.match(log, new RegExp(`DHCPACK\\(ms0\\) ${leased.replaceAll(".", "\\.")}`));
      assert.match(
        log,
        new RegExp(`DHCPRELEASE\\(ms0\\) ${leased.replaceAll(".", "\\.")}`),
        "RELEASE sent on stop",
      );
    } finally {
      if (dhcpd) {
        dhcpd.kill("SIGKILL");
        await dhcpd.status;
      }
      await ip("netns", "del", client).catch(() => {});
      await ip("netns", "del", server).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});

if (!root) console.log("skipping network controller root tests: not root");
else if (!haveAddon) console.log("skipping network controller root tests: addon not built");
else if (!DNSMASQ) console.log("skipping network controller root tests: dnsmasq not installed");
