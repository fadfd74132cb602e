/**
 * Privileged: runs the network conformance suite against rtnetlink inside a
 * fresh network namespace (needs root for `ip netns` and CAP_NET_ADMIN), so
 * the host's interfaces are never touched. The namespace is deleted after.
 */
import assert from "node:assert/strict";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "native network backend passes conformance inside a network namespace " +
    "(needs root, the native addon)",
  ignore: !root || !haveAddon,
  async fn() {
    const ns = `machined-test-${crypto.randomUUID().slice(0, 8)}`;
    const run = (args: string[]) => new Deno.Command("ip", { args }).output();
    assert.ok((await run(["netns", "add", ns])).success, `ip netns add ${ns}`);
    try {
      const suite = new URL("./native_netns_suite.ts", import.meta.url).pathname;
      const out = await new Deno.Command("ip", {
        args: ["netns", "exec", ns, Deno.execPath(), "test", "-A", "--no-check", suite],
        env: { MACHINED_NETNS: ns, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      if (!out.success) console.error(text);
      assert.ok(out.success, "conformance inside the namespace failed (output above)");
      // Link cases whose kind this kernel lacks (bond, 8021q, wireguard) are ignored and named.
      const m = /ok \| (\d+) passed \| 0 failed(?: \| (\d+) ignored)? \(/.exec(text);
      assert.ok(m, "none failed");
      assert.equal(Number(m[1]) + Number(m[2] ?? 0), 17, "every case registered");
      assert.ok(Number(m[1]) >= 13, "the base cases and the bridge cases ran");
      if (m[2]) console.log(text.split("\n").filter((l) => l.includes("ignored")).join("\n"));
    } finally {
      await run(["netns", "del", ns]);
    }
  },
});

if (!root) console.log("skipping native network root tests: not root");
else if (!haveAddon) console.log("skipping native network root tests: addon not built");
