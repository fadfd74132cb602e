/**
 * Privileged: bonds, VLANs and bridges made by the network controllers on
 * rtnetlink. Needs root (network namespaces, veth pairs, CAP_NET_ADMIN) and
 * the native addon; the bond cases need the kernel's bonding and 8021q
 * drivers and are ignored by name without them. Two throwaway namespaces,
 * the node's and a peer's, joined by four veth pairs: `links_netns_suite.ts`
 * runs in the node's, so the host's interfaces are never touched. Both
 * namespaces are deleted afterwards.
 */
import assert from "node:assert/strict";
import { ip } from "./testing_ip.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "bonds, VLANs and bridges in two namespaces (needs root, the native addon)",
  ignore: !root || !haveAddon,
  async fn() {
    const tag = crypto.randomUUID().slice(0, 6);
    const node = `machined-lk-${tag}`, peer = `machined-lp-${tag}`;
    await ip("netns", "add", node);
    await ip("netns", "add", peer);
    try {
      for (const [a, b] of [["lk0", "lp0"], ["lk1", "lp1"], ["lb0", "lq0"], ["lb1", "lq1"]]) {
        await ip("link", "add", a, "netns", node, "type", "veth", "peer", "name", b, "netns", peer);
        await ip("-n", peer, "link", "set", b, "up");
      }
      await ip("-n", node, "link", "set", "lo", "up");
      await ip("-n", peer, "link", "set", "lo", "up");
      const suite = new URL("./links_netns_suite.ts", import.meta.url).pathname;
      const out = await new Deno.Command("ip", {
        args: ["netns", "exec", node, Deno.execPath(), "test", "-A", "--no-check", suite],
        env: { MACHINED_NETNS: node, MACHINED_PEER_NS: peer, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      if (!out.success) console.error(text);
      assert.ok(out.success, "the suite inside the namespace failed (output above)");
      const m = /ok \| (\d+) passed \| 0 failed(?: \| (\d+) ignored)? \(/.exec(text);
      assert.ok(m, "none failed");
      assert.equal(Number(m[1]) + Number(m[2] ?? 0), 4, "every case registered");
      if (m[2]) console.log(text.split("\n").filter((l) => l.includes("ignored")).join("\n"));
    } finally {
      await ip("netns", "del", node).catch(() => {});
      await ip("netns", "del", peer).catch(() => {});
    }
  },
});

if (!root) console.log("skipping link root tests: not root");
else if (!haveAddon) console.log("skipping link root tests: addon not built");
