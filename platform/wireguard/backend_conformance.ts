/**
 * One suite both WireGuard backends must pass: the fake always
 * (backend_fake_test.ts), `wg` as root against a wireguard-go device in a
 * namespace the test made (controllers/wireguard/wireguard_root_test.ts).
 * Each case gets a fresh device with no keys or peers.
 * @module
 */
import assert from "node:assert/strict";
import type { WireguardBackend, WireguardDeviceSettings } from "./backend.ts";
import { WireguardError } from "./backend.ts";

/** What a case receives. */
export interface WireguardTarget {
  backend: WireguardBackend;
  /** An existing WireGuard device with no keys or peers. */
  device: string;
}

// Keys made with `wg genkey`/`wg pubkey`/`wg genpsk` for this suite only.
const PRIV = "KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=";
const PUB = "8XKzhF4LfHnSp7t13ZbBgqFqjmwUgpHLXU2QCwnBKiA=";
const PEER_A = "o3J57xUecL0vEvUGqoqsZ+PebZbccn1X0/Xs/ayZvWQ=";
const PEER_B = "NSKu4v6eIlwESax3RYYHbxaI98QxxYV4QC6utr5zW1c=";
const PSK = "SHpZc2y+bFNh6GX7bLDii4useqXScERZ6YjbRAa2eyI=";

const TWO_PEERS: WireguardDeviceSettings = {
  privateKey: PRIV,
  listenPort: 51999,
  peers: [
    {
      publicKey: PEER_A,
      presharedKey: PSK,
      endpoint: "192.0.2.7:51820",
      allowedIps: ["10.77.0.2/32", "192.168.77.0/24"],
      persistentKeepalive: 25,
    },
    { publicKey: PEER_B, allowedIps: ["10.77.0.3/32"] },
  ],
};

/** The cases, by name; the caller registers each with its own device. */
export const WIREGUARD_CONFORMANCE: Record<string, (t: WireguardTarget) => Promise<void>> = {
  "configure then show: the derived public key, the port and each peer, no secret": async (
    { backend, device },
  ) => {
    await backend.configure(device, TWO_PEERS);
    const s = await backend.show(device);
    assert.ok(s);
    assert.equal(s.publicKey, PUB);
    assert.equal(s.listenPort, 51999);
    const peers = [...s.peers].sort((a, b) => a.publicKey.localeCompare(b.publicKey));
    assert.deepEqual(
      peers.map((p) => [p.publicKey, p.endpoint, [...p.allowedIps].sort(), p.persistentKeepalive]),
      [
        [PEER_B, undefined, ["10.77.0.3/32"], undefined],
        [PEER_A, "192.0.2.7:51820", ["10.77.0.2/32", "192.168.77.0/24"], 25],
      ],
    );
    for (const p of peers) assert.deepEqual([p.lastHandshake, p.rxBytes, p.txBytes], [0, 0, 0]);
    const text = JSON.stringify(s);
    assert.ok(!text.includes(PRIV) && !text.includes(PSK), "no secret in the state");
  },
  "configure again: unlisted peers go, the same settings twice change nothing": async (
    { backend, device },
  ) => {
    await backend.configure(device, TWO_PEERS);
    const one = { ...TWO_PEERS, peers: [TWO_PEERS.peers[1]] };
    await backend.configure(device, one);
    await backend.configure(device, one);
    const s = await backend.show(device);
    assert.deepEqual(s?.peers.map((p) => p.publicKey), [PEER_B]);
  },
  "a device that does not exist shows undefined and cannot be configured": async ({ backend }) => {
    assert.equal(await backend.show("mcnowg0"), undefined);
    await assert.rejects(
      () => backend.configure("mcnowg0", TWO_PEERS),
      (e) => e instanceof WireguardError && e.device === "mcnowg0" && !e.message.includes(PRIV),
    );
  },
  "a key wg refuses is an error that quotes no key": async ({ backend, device }) => {
    const secret = "not-a-key-but-a-secret-all-the-same";
    for (
      const bad of [
        { ...TWO_PEERS, privateKey: secret },
        { ...TWO_PEERS, peers: [{ ...TWO_PEERS.peers[0], presharedKey: secret }] },
      ]
    ) {
      await assert.rejects(
        () => backend.configure(device, bad),
        (e) =>
          e instanceof WireguardError && !e.message.includes(secret) &&
          !e.message.includes(PSK) && !e.message.includes(PRIV),
      );
    }
  },
};
