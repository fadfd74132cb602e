import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { FakeFirewallBackend } from "../../platform/firewall/mod.ts";
import {
  FIREWALL_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FIREWALL_TABLE } from "./compile.ts";
import { FirewallController } from "./firewall_controller.ts";

const BLOCK = `    firewall:
      default: block
      admin_subnets: [192.168.1.0/24]
      rules:
        - { name: web, ports: [443], protocol: tcp, sources: [10.0.0.0/8] }
`;

async function withFirewall(
  f: (env: {
    backend: FakeFirewallBackend;
    store: Store<ResourceSpecs>;
    setNetwork: (network: string) => Promise<void>;
  }) => Promise<void>,
) {
  const backend = new FakeFirewallBackend();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(new FirewallController({ backend, resyncInterval: 20 }));
  const setNetwork = async (network: string) => {
    const parsed = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: node-1\n  network:\n${network}`,
      "t.yaml",
    );
    if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
    await store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "t.yaml", config: parsed.config }),
    );
  };
  runtime.start();
  try {
    await f({ backend, store, setNetwork });
  } finally {
    await runtime.stop();
  }
}

Deno.test("firewall controller: applies the config's firewall and shows it in FirewallStatus", async () => {
  await withFirewall(async ({ backend, store, setNetwork }) => {
    await setNetwork(BLOCK);
    const s = await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce);
    assert.equal(s.spec.defaultAction, "block");
    assert.deepEqual(s.spec.rules.map((r) => r.name), ["web"]);
    assert.deepEqual(s.spec.adminSubnets, ["192.168.1.0/24"]);
    assert.equal(s.spec.apiPort, 50000);
    assert.match(s.spec.appliedHash, /^[0-9a-f]{64}$/);
    assert.equal(s.spec.driftReapplies, 0);
    const lines = backend.tableLines(FIREWALL_TABLE)!;
    assert.ok(lines.some((l) => l.includes("policy drop")));
    assert.ok(lines.some((l) => l.startsWith("tcp dport { 443 } ip saddr { 10.0.0.0/8 } accept")));
  });
});

Deno.test("firewall controller: a config change re-applies; no firewall removes the table", async () => {
  await withFirewall(async ({ backend, store, setNetwork }) => {
    await setNetwork(BLOCK);
    const first = await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce);
    await setNetwork(BLOCK.replace("default: block", "default: accept"));
    const second = await waitForResource(
      store,
      FIREWALL_STATUS,
      (r) => r.spec.defaultAction === "accept" && r.spec.inForce,
    );
    assert.notEqual(second.spec.appliedHash, first.spec.appliedHash);
    assert.ok(backend.tableLines(FIREWALL_TABLE)!.some((l) => l.includes("policy accept")));
    await setNetwork("    interfaces: []\n");
    await waitForResource(store, FIREWALL_STATUS, (r) => !r.spec.enabled);
    assert.equal(backend.tableLines(FIREWALL_TABLE), undefined);
  });
});

Deno.test("firewall controller: a table deleted or changed by someone else is re-applied and counted", async () => {
  await withFirewall(async ({ backend, store, setNetwork }) => {
    await setNetwork(BLOCK);
    await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce);
    const applied = [...backend.tableLines(FIREWALL_TABLE)!];
    backend.deleteBehindBack(FIREWALL_TABLE);
    await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.driftReapplies === 1);
    assert.deepEqual(backend.tableLines(FIREWALL_TABLE), applied);
    backend.addBehindBack(FIREWALL_TABLE, "tcp dport 22 accept");
    await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.driftReapplies === 2);
    assert.deepEqual(backend.tableLines(FIREWALL_TABLE), applied);
  });
});

Deno.test("firewall controller: nft refusing the ruleset shows in the status and is retried", async () => {
  await withFirewall(async ({ backend, store, setNetwork }) => {
    backend.faults.failNext("apply", new Error("nft exited with 1: Error: Could not process rule"));
    await setNetwork(BLOCK);
    const failed = await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.error !== "");
    assert.match(failed.spec.error, /Could not process rule/);
    assert.equal(failed.spec.inForce, false);
    const ok = await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce, 10_000);
    assert.equal(ok.spec.error, "");
  });
});

Deno.test("firewall controller: a node with no firewall never runs nft (a kernel without nf_tables stays healthy)", async () => {
  const backend = new FakeFirewallBackend();
  backend.faults.failAlways("remove", new Error("nft: cache initialization failed"));
  backend.faults.failAlways("read", new Error("nft: cache initialization failed"));
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(new FirewallController({ backend, resyncInterval: 20 }));
  const parsed = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: node-1\n`, "t.yaml");
  if (!parsed.ok) throw new Error("bad test config");
  await store.modify(
    { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
    "test",
    () => ({ source: "t.yaml", config: parsed.config }),
  );
  runtime.start();
  try {
    const s = await waitForResource(store, FIREWALL_STATUS, (r) => !r.spec.enabled);
    await new Promise((r) => setTimeout(r, 100)); // several resyncs
    const again = store.get(FIREWALL_STATUS, "network", s.metadata.id);
    assert.equal(again?.spec.error, "");
    assert.equal(again?.spec.inForce, false);
  } finally {
    await runtime.stop();
  }
});

Deno.test("firewall controller: a block firewall opens each WireGuard listen port, and follows it", async () => {
  const wg = (port: number) =>
    BLOCK + `    wireguard:
      - { name: wg0, private_key: KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=, listen_port: ${port} }
      - { name: wg1, private_key: KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8= }
`;
  await withFirewall(async ({ backend, store, setNetwork }) => {
    await setNetwork(wg(51820));
    const s = await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce);
    assert.deepEqual(s.spec.rules.map((r) => [r.name, r.protocol, r.ports, r.sources]), [
      ["web", "tcp", ["443"], ["10.0.0.0/8"]],
      ["wireguard-wg0", "udp", ["51820"], []],
    ]);
    assert.ok(backend.tableLines(FIREWALL_TABLE)!.some((l) => l.startsWith("udp dport { 51820 }")));
    await setNetwork(wg(51821));
    await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.rules[1]?.ports[0] === "51821");
    const lines = backend.tableLines(FIREWALL_TABLE)!;
    assert.ok(lines.some((l) => l.startsWith("udp dport { 51821 }")));
    assert.ok(!lines.some((l) => l.includes("51820")), "the old port is closed");
  });
});
