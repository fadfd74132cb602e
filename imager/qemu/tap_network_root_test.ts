import assert from "node:assert/strict";
import { createTapNetwork, DNSMASQ_PATHS } from "./tap_network.ts";

const root = Deno.uid?.() === 0;
const hasDnsmasq = DNSMASQ_PATHS.some((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name: "a tap network lives in its own namespace and is gone after close (needs root, dnsmasq)",
  ignore: !root || !hasDnsmasq,
}, async () => {
  const net = await createTapNetwork();
  try {
    const out = await net.command("ip", ["-j", "addr", "show"], { stdout: "piped" }).output();
    assert.ok(out.success);
    const links = JSON.parse(new TextDecoder().decode(out.stdout)) as Array<
      { ifname: string; master?: string; addr_info: Array<{ local: string }> }
    >;
    const names = links.map((l) => l.ifname).sort();
    assert.deepEqual(names, ["br0", "lo", "tap0"]);
    assert.equal(links.find((l) => l.ifname === "tap0")?.master, "br0");
    assert.ok(
      links.find((l) => l.ifname === "br0")?.addr_info.some((a) => a.local === net.gateway),
    );
    // The host namespace has neither device.
    const host = await new Deno.Command("ip", { args: ["link", "show", "tap0"], stderr: "null" })
      .output();
    assert.equal(host.success, false);
    assert.match(await Deno.readTextFile(net.log), /DHCP, IP range 10\.99\.0\.50/);
  } finally {
    await net.close();
  }
  const list = await new Deno.Command("ip", { args: ["netns", "list"], stdout: "piped" }).output();
  assert.ok(!new TextDecoder().decode(list.stdout).includes(net.netns), "namespace deleted");
  await net.close(); // idempotent
});
