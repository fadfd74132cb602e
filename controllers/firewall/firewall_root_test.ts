/**
 * Privileged: the firewall against real nftables and real traffic. Needs root (network
 * namespaces, veth pairs, CAP_NET_ADMIN), the native addon and nft (Debian `nftables`). Two
 * throwaway namespaces joined by a veth pair: firewall_netns_suite.ts runs the controller in
 * one, the other is the peer that connects. The host's interfaces and ruleset are never
 * touched; both namespaces are deleted afterwards.
 */
import assert from "node:assert/strict";
import { ip } from "../network/testing_ip.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);
const haveNft = ["/usr/sbin/nft", "/sbin/nft"].some((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name: "firewall in a namespace: nft conformance, the listed ruleset against the intent, " +
    "traffic from a peer, re-apply after deletion (needs root, the native addon, nft)",
  ignore: !root || !haveAddon || !haveNft,
  async fn() {
    const tag = crypto.randomUUID().slice(0, 6);
    const node = `machined-fw-${tag}`, peer = `machined-fp-${tag}`;
    await ip("netns", "add", node);
    await ip("netns", "add", peer);
    try {
      await ip(
        "link",
        "add",
        "fw0",
        "netns",
        node,
        "type",
        "veth",
        "peer",
        "name",
        "fwp0",
        "netns",
        peer,
      );
      for (
        const [ns, link, v4, v6] of [
          [node, "fw0", "10.66.0.1/24", "fd66::1/64"],
          [peer, "fwp0", "10.66.0.2/24", "fd66::2/64"],
        ]
      ) {
        await ip("-n", ns, "addr", "add", v4, "dev", link);
        await ip("-n", ns, "addr", "add", v6, "dev", link, "nodad");
        await ip("-n", ns, "link", "set", link, "up");
        await ip("-n", ns, "link", "set", "lo", "up");
      }
      const suite = new URL("./firewall_netns_suite.ts", import.meta.url).pathname;
      const out = await new Deno.Command("ip", {
        args: ["netns", "exec", node, Deno.execPath(), "test", "-A", "--no-check", suite],
        env: {
          MACHINED_FW_NETNS: node,
          MACHINED_FW_PEER: peer,
          MACHINED_FW_HOST_NET: Deno.readLinkSync("/proc/self/ns/net"),
          NO_COLOR: "1",
        },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      if (!out.success) console.error(text);
      assert.ok(out.success, "the suite inside the namespace failed (output above)");
      assert.match(text, /ok \| 7 passed \| 0 failed \(/, "all ran: none failed or ignored");
      const cost = /FIREWALL_COST .*/.exec(text)?.[0];
      assert.ok(cost, "the suite reports the apply cost");
      console.log(cost);
    } finally {
      await ip("netns", "del", node).catch(() => {});
      await ip("netns", "del", peer).catch(() => {});
    }
  },
});
