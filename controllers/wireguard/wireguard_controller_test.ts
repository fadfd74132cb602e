import assert from "node:assert/strict";
import { configSha256, type MachineConfig, parseMachineConfig } from "../../config/mod.ts";
import { redactConfigSecrets } from "../../config/mod.ts";
import { FakeWireguardBackend, publicKeyOf } from "../../platform/wireguard/mod.ts";
import {
  LINK_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  WIREGUARD_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { WireguardController } from "./wireguard_controller.ts";

// Keys made with `wg genkey`/`wg pubkey`/`wg genpsk` for these tests only.
const PRIV = "KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=";
const PEER_A = "o3J57xUecL0vEvUGqoqsZ+PebZbccn1X0/Xs/ayZvWQ=";
const PEER_B = "NSKu4v6eIlwESax3RYYHbxaI98QxxYV4QC6utr5zW1c=";
const PSK = "SHpZc2y+bFNh6GX7bLDii4useqXScERZ6YjbRAa2eyI=";

const wg0 = (peers: string) =>
  `    wireguard:
      - name: wg0
        private_key: ${PRIV}
        listen_port: 51820
        addresses: ["10.8.0.1/24"]
        peers:
${peers}`;
const PEERS_AB =
  `          - { public_key: ${PEER_A}, preshared_key: ${PSK}, endpoint: "192.0.2.7:51820", allowed_ips: ["10.8.0.2/32"], persistent_keepalive: 25 }
          - { public_key: ${PEER_B}, allowed_ips: ["10.8.0.3/32"] }
`;

async function withWireguard(
  f: (env: {
    backend: FakeWireguardBackend;
    store: Store<ResourceSpecs>;
    controller: WireguardController;
    setNetwork: (network: string) => Promise<void>;
    addLink: (name: string) => Promise<void>;
  }) => Promise<void>,
) {
  const backend = new FakeWireguardBackend();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  let inForce: MachineConfig | undefined;
  const controller = new WireguardController({
    backend,
    secrets: () => inForce,
    resyncInterval: 20,
  });
  runtime.register(controller);
  const setNetwork = async (network: string) => {
    const parsed = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: node-1\n  network:\n${network}`,
      "t.yaml",
    );
    if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
    // As config_loader.ts does: the store's copy is redacted, the keeper's is not (and lags).
    await store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({
        source: "t.yaml",
        config: redactConfigSecrets(parsed.config),
        sha256: configSha256(parsed.config),
      }),
    );
    inForce = parsed.config;
  };
  const addLink = async (name: string) => {
    backend.addDevice(name);
    await store.modify({ type: LINK_STATUS, namespace: "network", id: name }, "test", () => ({
      name,
      index: 7,
      type: "arphrd-65534",
      kind: "wireguard",
      mac: "",
      mtu: 1420,
      up: true,
      operstate: "unknown",
      physical: false,
      master: "",
      ours: true,
    }));
  };
  runtime.start();
  try {
    await f({ backend, store, controller, setNetwork, addLink });
  } finally {
    await runtime.stop();
  }
}

Deno.test("wireguard controller: waits for the link, then applies keys and peers and reports them", async () => {
  await withWireguard(async ({ backend, store, setNetwork, addLink }) => {
    await setNetwork(wg0(PEERS_AB));
    const waiting = await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.error !== "");
    assert.match(waiting.spec.error, /link "wg0" does not exist yet/);
    await addLink("wg0");
    const s = await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.configured);
    assert.equal(s.spec.publicKey, await publicKeyOf(PRIV));
    assert.equal(s.spec.listenPort, 51820);
    assert.deepEqual(s.spec.peers.map((p) => [p.publicKey, p.endpoint, p.persistentKeepalive]), [
      [PEER_A, "192.0.2.7:51820", 25],
      [PEER_B, undefined, undefined],
    ]);
    assert.equal(s.spec.peers[0].lastHandshake, undefined);
    const text = JSON.stringify(s.spec);
    assert.ok(!text.includes(PRIV) && !text.includes(PSK), "no secret in WireguardStatus");
    // A handshake shows on the next resync, without a config change.
    backend.handshake("wg0", PEER_A, 1_800_000_000, 1000, 2000);
    const hs = await waitForResource(
      store,
      WIREGUARD_STATUS,
      (r) => r.spec.peers[0]?.lastHandshake !== undefined,
    );
    assert.equal(hs.spec.peers[0].lastHandshake, "2027-01-15T08:00:00.000Z");
    assert.deepEqual([hs.spec.peers[0].rxBytes, hs.spec.peers[0].txBytes], [1000, 2000]);
  });
});

Deno.test("wireguard controller: a removed peer goes; configure runs once per change", async () => {
  await withWireguard(async ({ backend, store, setNetwork, addLink }) => {
    await addLink("wg0");
    await setNetwork(wg0(PEERS_AB));
    await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.peers.length === 2);
    const before = backend.configured;
    await setNetwork(wg0(`          - { public_key: ${PEER_B}, allowed_ips: ["10.8.0.3/32"] }\n`));
    const s = await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.peers.length === 1);
    assert.equal(s.spec.peers[0].publicKey, PEER_B);
    await new Promise((r) => setTimeout(r, 100)); // several resyncs
    assert.equal(backend.configured, before + 1, "resyncs read, they do not re-apply");
  });
});

Deno.test("wireguard controller: a failing wg is reported and retried; drift is re-applied", async () => {
  await withWireguard(async ({ backend, store, setNetwork, addLink }) => {
    await addLink("wg0");
    backend.faults.failNext("configure", "EIO");
    await setNetwork(wg0(PEERS_AB));
    const failed = await waitForResource(store, WIREGUARD_STATUS, (r) => /EIO/.test(r.spec.error));
    assert.equal(failed.spec.configured, false);
    await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.configured && !r.spec.error);
    // Someone else removes every peer (`wg set wg0 peer ... remove`): machined puts them back.
    await backend.configure("wg0", { privateKey: PRIV, listenPort: 51820, peers: [] });
    const back = await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.driftReapplies > 0);
    assert.equal(back.spec.peers.length, 2);
  });
});

Deno.test("wireguard controller: an interface dropped from the config loses its status", async () => {
  await withWireguard(async ({ store, setNetwork, addLink }) => {
    await addLink("wg0");
    await setNetwork(wg0(PEERS_AB));
    await waitForResource(store, WIREGUARD_STATUS, (r) => r.spec.configured);
    await setNetwork("    interfaces: []\n");
    await waitForAbsence(store, WIREGUARD_STATUS, (r) => r.spec.name === "wg0");
  });
});
