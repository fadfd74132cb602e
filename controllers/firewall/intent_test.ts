import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { compileFirewall } from "./compile.ts";
import { firewallIntent } from "./intent.ts";

const KEY = "KM3915KVXVl1c+491O1yIIUEEyurn+P3CO5c8h0sHG8=";
const PEER_A = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=";
const PEER_B = "TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0=";

/** A block firewall and one WireGuard interface with the given peers (YAML flow items). */
function config(peers: string[]) {
  const yaml = `version: v1alpha1
machine:
  hostname: node-1
  network:
    firewall:
      default: block
      admin_subnets: [192.168.1.0/24]
    wireguard:
      - name: wg0
        private_key: ${KEY}
        listen_port: 51820
        peers: [${peers.join(", ")}]
`;
  const parsed = parseMachineConfig(yaml, "t.yaml");
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
  return parsed.config;
}

Deno.test("Talos failure mode: WireGuard peers drifting from the firewall (the listen port follows the interface, never its peers)", () => {
  const none = config([]);
  const one = config([
    `{ public_key: "${PEER_A}", endpoint: "198.51.100.7:51820", allowed_ips: [10.9.0.2/32] }`,
  ]);
  const moved = config([
    `{ public_key: "${PEER_A}", endpoint: "203.0.113.40:40000", allowed_ips: [10.9.0.2/32] }`,
    `{ public_key: "${PEER_B}", endpoint: "[2001:db8::9]:51820", allowed_ips: [10.9.0.3/32] }`,
  ]);
  const texts = [none, one, moved].map((c) => compileFirewall(firewallIntent(c)!));
  // A peer added, a peer that roamed to another endpoint and a second peer behind IPv6 change
  // nothing the firewall holds, so there is nothing to fall out of step when peers change.
  assert.equal(texts[1], texts[0]);
  assert.equal(texts[2], texts[0]);
  const wg = firewallIntent(moved)!.rules.find((r) => r.name === "wireguard-wg0");
  assert.deepEqual(wg, {
    name: "wireguard-wg0",
    protocol: "udp",
    ports: ["51820"],
    sources: [],
    except: [],
  });
  assert.match(texts[0], /udp dport \{ 51820 \} ip saddr \{ 0\.0\.0\.0\/0 \} accept/);
  assert.match(texts[0], /udp dport \{ 51820 \} ip6 saddr \{ ::\/0 \} accept/);
  assert.doesNotMatch(texts[2], /198\.51\.100\.7|203\.0\.113\.40|2001:db8::9/);
});
