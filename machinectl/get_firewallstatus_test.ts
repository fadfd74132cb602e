/**
 * `machinectl get firewallstatus` against the real apid and machined-side server, on a store the
 * firewall controller published into over a fake nftables: the table, -o yaml and -o json, for
 * every role (subnets and ports are no secret).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { parseMachineConfig } from "../config/mod.ts";
import { FirewallController } from "../controllers/firewall/mod.ts";
import { FakeFirewallBackend } from "../platform/firewall/mod.ts";
import type { Role } from "../pki/mod.ts";
import { FIREWALL_STATUS, MACHINE_CONFIG, MACHINE_CONFIG_ID } from "../resources/mod.ts";
import { ControllerRuntime } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { clientConfig, runCli } from "./testing.ts";

Deno.test("machinectl get firewallstatus: table, yaml and json, for every role", async () => {
  const f = await startApiFixture();
  const runtime = new ControllerRuntime(f.store);
  try {
    const parsed = parseMachineConfig(
      `version: v1alpha1
machine:
  hostname: node-1
  network:
    firewall:
      default: block
      admin_subnets: [192.168.1.0/24]
      rules:
        - { name: web, ports: [443, "8000-8100"], protocol: tcp, sources: [10.0.0.0/8] }
`,
      "t.yaml",
    );
    assert.ok(parsed.ok);
    f.store.create({
      type: MACHINE_CONFIG,
      namespace: "config",
      id: MACHINE_CONFIG_ID,
      owner: "test",
      spec: { source: "t.yaml", config: parsed.config },
    });
    runtime.register(new FirewallController({ backend: new FakeFirewallBackend() }));
    runtime.start();
    await waitForResource(f.store, FIREWALL_STATUS, (r) => r.spec.inForce);
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const table = await runCli(config, "get", "firewallstatus");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, row] = table.out.trim().split("\n");
      assert.match(head, /ENABLED\s+DEFAULT\s+RULES\s+ADMIN\s+IN FORCE\s+REAPPLIES\s+HASH\s+ERROR/);
      assert.match(
        row,
        /FirewallStatus\s+firewall\s+\d+\s+true\s+block\s+web\s+192\.168\.1\.0\/24\s+true\s+0\s+[0-9a-f]{12}/,
      );
    }
    const config = await clientConfig(f, "os:reader");
    const y = await runCli(config, "get", "fw", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.equal(spec.defaultAction, "block");
    assert.deepEqual(spec.rules[0].ports, ["443", "8000-8100"]);
    const j = await runCli(config, "get", "firewall", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    assert.equal((Array.isArray(json) ? json[0] : json).spec.apiPort, 50000);
  } finally {
    await runtime.stop();
    await f.close();
  }
});
