/**
 * ApplyConfiguration `try` for a firewall change: the firewall controller follows the tried
 * config at once, and follows the revert back when the deadline passes unconfirmed, so a rule
 * that cuts the operator off undoes itself.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../logs/mod.ts";
import { FakeClock } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { Machined } from "../../core/mod.ts";
import { FIREWALL_TABLE, firewallControllers } from "../../controllers/firewall/mod.ts";
import { FakeFirewallBackend } from "../../platform/firewall/mod.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { ConfigModes } from "./config_modes.ts";

const cfg = (mode: string) =>
  `version: v1alpha1
machine:
  hostname: node-1
  network:
    firewall:
      default: ${mode}
      admin_subnets: [192.168.1.0/24]
`;

Deno.test("try: a block firewall applies at once and reverts to the accept one at the deadline", async () => {
  const clock = new FakeClock();
  const m = new Machined({
    mode: "dev",
    pid1: false,
    clock,
    logger: createLogger({ console: false }),
  });
  const backend = new FakeFirewallBackend();
  m.register(firewallControllers({ backend }));
  m.start();
  const keeper = new ConfigKeeper(m);
  const modes = new ConfigModes(keeper, { reboot: () => Promise.resolve() });
  try {
    assert.equal((await keeper.apply(cfg("accept"), "image")).state, "valid");
    await waitForResource(m.store, "FirewallStatus", (r) => r.spec.inForce);
    const r = await modes.apply(cfg("block"), {
      dryRun: false,
      by: { name: "test", role: "os:admin" },
      mode: "try",
      tryTimeoutMs: 30_000,
    });
    assert.equal(r.mode, "try");
    await waitForResource(
      m.store,
      "FirewallStatus",
      (x) => x.spec.defaultAction === "block" && x.spec.inForce,
    );
    assert.ok(backend.tableLines(FIREWALL_TABLE)!.some((l) => l.includes("policy drop")));
    const reverted = waitForResource(
      m.store,
      "FirewallStatus",
      (x) => x.spec.defaultAction === "accept" && x.spec.inForce,
    );
    await clock.advance(30_000);
    await reverted;
    assert.ok(backend.tableLines(FIREWALL_TABLE)!.some((l) => l.includes("policy accept")));
  } finally {
    modes.dispose();
    await m.stop();
  }
});
