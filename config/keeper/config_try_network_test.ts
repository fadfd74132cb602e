/**
 * ApplyConfiguration `try` for a link change: the network controllers follow the tried config at
 * once (a VLAN made, its address applied) and follow the revert when the deadline passes
 * unconfirmed (the VLAN deleted, the node's first address untouched), so a VLAN that cuts the
 * operator off undoes itself like a firewall rule does (config_try_firewall_test.ts).
 */
import assert from "node:assert/strict";
import { createLogger } from "../../logs/mod.ts";
import { FakeClock } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { Machined } from "../../core/mod.ts";
import { createNetworkControllers } from "../../controllers/network/mod.ts";
import { FakeNetworkBackend } from "../../platform/network/mod.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { ConfigModes } from "./config_modes.ts";

const BASE = `version: v1alpha1
machine:
  hostname: node-1
  network:
    interfaces:
      - { name: eth0, addresses: ["10.0.0.2/24"] }
`;
const WITH_VLAN = BASE + `    vlans:
      - { parent: eth0, id: 42, addresses: ["10.42.0.2/24"] }
`;

Deno.test("try: a VLAN applies at once and is removed again at the deadline", async () => {
  const clock = new FakeClock();
  const m = new Machined({
    mode: "dev",
    pid1: false,
    clock,
    logger: createLogger({ console: false }),
  });
  const backend = new FakeNetworkBackend();
  backend.addLink({ name: "eth0", up: true });
  const dir = await Deno.makeTempDir({ prefix: "machined-try-net-" });
  const net = createNetworkControllers({
    backend,
    autoDhcp: false,
    watchWindowMs: 0,
    resolvConfPath: `${dir}/resolv.conf`, // never the host's: this test may run as root
  });
  m.register(net.controllers);
  m.start();
  const keeper = new ConfigKeeper(m);
  const modes = new ConfigModes(keeper, { reboot: () => Promise.resolve() });
  try {
    assert.equal((await keeper.apply(BASE, "image")).state, "valid");
    await waitForResource(m.store, "AddressStatus", (r) => r.spec.address === "10.0.0.2");
    const r = await modes.apply(WITH_VLAN, {
      dryRun: false,
      by: { name: "test", role: "os:admin" },
      mode: "try",
      tryTimeoutMs: 30_000,
    });
    assert.equal(r.mode, "try");
    await waitForResource(m.store, "LinkStatus", (x) => x.metadata.id === "eth0.42");
    await waitForResource(m.store, "AddressStatus", (x) => x.spec.address === "10.42.0.2");
    await clock.advance(30_000);
    await waitForAbsence(m.store, "LinkStatus", (x) => x.metadata.id === "eth0.42");
    assert.ok(!(await backend.listLinks()).some((l) => l.name === "eth0.42"), "the VLAN is gone");
    const addresses = (await backend.listAddresses()).map((a) => a.address);
    assert.ok(addresses.includes("10.0.0.2"), "the base config's address stays");
    assert.ok(!addresses.includes("10.42.0.2"), "the VLAN's address went with it");
  } finally {
    modes.dispose();
    await m.stop();
    await net.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
