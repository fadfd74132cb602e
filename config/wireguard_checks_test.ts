import assert from "node:assert/strict";
import { parseMachineConfig } from "./parse_machine_config.ts";
import { configuredLinks } from "./schema/network_links.ts";
import { redactConfigError, redactConfigSecrets, REDACTED } from "./secrets.ts";

// Keys made with `wg genkey | tee /dev/stderr | wg pubkey` for these tests only.
const PRIV = "KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=";
const PUB_A = "o3J57xUecL0vEvUGqoqsZ+PebZbccn1X0/Xs/ayZvWQ=";
const PUB_B = "NSKu4v6eIlwESax3RYYHbxaI98QxxYV4QC6utr5zW1c=";
const PSK = "SHpZc2y+bFNh6GX7bLDii4useqXScERZ6YjbRAa2eyI=";

const net = (body: string) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  network:\n    wireguard:\n${body}`;

function errors(text: string): string[] {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok, "expected errors, got a valid config");
  return result.errors.map((e) => redactConfigError(e).format());
}

Deno.test("a WireGuard interface parses with MTU 1420 and is a configured link", () => {
  const r = parseMachineConfig(
    net(`      - name: wg0
        private_key: ${PRIV}
        listen_port: 51820
        addresses: ["10.8.0.1/24"]
        peers:
          - public_key: ${PUB_A}
            preshared_key: ${PSK}
            endpoint: "vpn.example.org:51820"
            allowed_ips: ["10.8.0.2/32", "192.168.50.0/24"]
            persistent_keepalive: 25
`),
    "t.yaml",
  );
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  const wg = r.config.machine.network.wireguard[0];
  assert.equal(wg.mtu, 1420);
  assert.equal(wg.up, true);
  assert.equal(wg.peers[0].persistent_keepalive, 25);
  assert.deepEqual(
    configuredLinks(r.config.machine.network).map((l) => [l.name, l.kind, l.mtu, l.dhcp]),
    [["wg0", "wireguard", 1420, false]],
  );
  const shown = redactConfigSecrets(r.config).machine.network.wireguard[0];
  assert.equal(shown.private_key, REDACTED);
  assert.equal(shown.peers[0].preshared_key, REDACTED);
  assert.equal(shown.peers[0].public_key, PUB_A);
});

Deno.test("a bad private key is refused with its line and column, never quoted", () => {
  const secret = "not-a-key-but-still-a-secret-value";
  const errs = errors(net(`      - name: wg0\n        private_key: ${secret}\n`));
  assert.equal(errs.length, 1);
  assert.match(errs[0], /t\.yaml:7:22: machine\.network\.wireguard\[0\]\.private_key/);
  assert.match(errs[0], /invalid private key/);
  assert.ok(!errs[0].includes(secret), errs[0]);
});

Deno.test("a bad public key, endpoint, MTU and keepalive are each refused", () => {
  const errs = errors(net(`      - name: wg0
        private_key: ${PRIV}
        mtu: 9999999
        peers:
          - public_key: abc
            endpoint: "10.0.0.1"
            persistent_keepalive: 0
`));
  assert.equal(errs.length, 4, errs.join("\n"));
  assert.match(errs.join("\n"), /mtu 9999999 is out of range 1280\.\.65455/);
  assert.match(errs.join("\n"), /peers\[0\]\.public_key: invalid WireGuard key "abc"/);
  assert.match(errs.join("\n"), /invalid endpoint "10\.0\.0\.1"/);
  assert.match(errs.join("\n"), /persistent_keepalive 0 is out of range/);
});

Deno.test("a peer listed twice and overlapping allowed IPs are refused", () => {
  const errs = errors(net(`      - name: wg0
        private_key: ${PRIV}
        peers:
          - { public_key: ${PUB_A}, allowed_ips: ["10.8.0.0/24"] }
          - { public_key: ${PUB_B}, allowed_ips: ["10.8.0.7/32", "fd00::/64"] }
          - { public_key: ${PUB_A} }
`));
  assert.equal(errs.length, 2, errs.join("\n"));
  assert.match(
    errs[0],
    /peers\[1\]\.allowed_ips\[0\]: allowed IP 10\.8\.0\.7\/32 overlaps 10\.8\.0\.0\/24 of peers\[0\]/,
  );
  assert.match(errs[1], /peers\[2\]\.public_key: peer "o3J5.*" is listed twice/);
});

Deno.test("a WireGuard name taken by another link, and a listen port used twice, are refused", () => {
  const errs = errors(`version: v1alpha1
machine:
  hostname: node-1
  network:
    bridges: [{ name: wg0 }]
    wireguard:
      - { name: wg0, private_key: ${PRIV}, listen_port: 51820 }
      - { name: wg1, private_key: ${PRIV}, listen_port: 51820 }
`);
  assert.equal(errs.length, 2, errs.join("\n"));
  assert.match(errs.join("\n"), /link "wg0" is defined twice/);
  assert.match(errs.join("\n"), /listen_port 51820 is used by two WireGuard interfaces/);
});

Deno.test("Talos failure mode: MTU inside tunnels (a tunnel over a tunnel sets its own MTU; none under IPv6's 1280)", () => {
  // wg1 rides inside wg0 (its endpoint is wg0's peer): wg0's 1420 less WireGuard's 80 bytes of
  // outer IPv6, UDP and WireGuard header is 1340, which the link is created with.
  const r = parseMachineConfig(
    net(`      - { name: wg0, private_key: ${PRIV}, addresses: ["10.8.0.1/24"] }
      - name: wg1
        private_key: ${PRIV}
        mtu: 1340
        peers: [{ public_key: ${PUB_A}, endpoint: "10.8.0.2:51821", allowed_ips: ["10.9.0.0/24"] }]
`),
    "t.yaml",
  );
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  assert.deepEqual(
    configuredLinks(r.config.machine.network).map((l) => [l.name, l.mtu]),
    [["wg0", 1420], ["wg1", 1340]],
  );
  const low = errors(net(`      - { name: wg0, private_key: ${PRIV}, mtu: 1279 }\n`));
  assert.match(low.join("\n"), /mtu 1279 is out of range 1280\.\.65455/);
});
