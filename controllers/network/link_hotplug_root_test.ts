/**
 * Privileged (network namespaces need root): links that appear after start
 * are configured, in a namespace this test creates and deletes, so the
 * host's interfaces are never touched. The suite inside
 * (`link_hotplug_netns_suite.ts`) prints the time from creating the link to
 * its address being in force.
 */
import assert from "node:assert/strict";
import { ip } from "./testing_ip.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);

Deno.test({
  name: "link hotplug in a namespace: a veth added after start is configured " +
    "(needs root, the native addon)",
  ignore: !root || !haveAddon,
  async fn() {
    const ns = `machined-hp-${crypto.randomUUID().slice(0, 6)}`;
    await ip("netns", "add", ns);
    try {
      const suite = new URL("./link_hotplug_netns_suite.ts", import.meta.url).pathname;
      const out = await new Deno.Command("ip", {
        args: ["netns", "exec", ns, Deno.execPath(), "test", "-A", "--no-check", suite],
        env: { MACHINED_NETNS: ns, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      if (!out.success) console.error(text);
      assert.ok(out.success, "the suite inside the namespace failed (output above)");
      assert.match(text, /ok \| 1 passed \| 0 failed \(/, "it ran: not failed or ignored");
      for (const line of text.split("\n")) if (line.includes('"bench":')) console.log(line);
    } finally {
      await ip("netns", "del", ns).catch(() => {});
    }
  },
});
