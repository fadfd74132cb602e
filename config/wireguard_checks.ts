/**
 * Cross-field rules of `machine.network.wireguard`, on the raw parsed YAML
 * like the rest of `semantic_checks.ts` (names shared with other links are
 * `link_checks.ts`'s):
 * - a peer's public key appears once per interface (`wg` would merge the two
 *   entries, the second silently winning);
 * - no two peers of one interface have overlapping allowed IPs (the kernel
 *   routes an address to one peer only: the later one takes it from the
 *   earlier without a word, the kind of drift that is hard to see);
 * - a listen port is used by one interface.
 *
 * Errors name public keys and networks, never the secret keys.
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import { type Cidr, formatCidr, networkOf, parseCidr } from "../ip/mod.ts";
import { list, type Obj, obj, str } from "./raw_values.ts";
import type { SemanticIssue } from "./semantic_checks.ts";

/** A cross-field problem: the semantic checks' issue, without a target. */
export type WireguardIssue = SemanticIssue;

/** Every problem with the WireGuard interfaces of a raw `machine.network`. */
export function checkWireguard(network: Obj | undefined): WireguardIssue[] {
  const issues: WireguardIssue[] = [];
  const ports = new Map<number, number>();
  list(network?.wireguard).forEach((entry, i) => {
    const wg = obj(entry);
    if (!wg) return;
    const at: PathSegment[] = ["machine", "network", "wireguard", i];
    const port = wg.listen_port;
    if (typeof port === "number") {
      const first = ports.get(port);
      if (first !== undefined) {
        issues.push({
          segments: [...at, "listen_port"],
          message: `listen_port ${port} is used by two WireGuard interfaces`,
          hint: `also at machine.network.wireguard[${first}]; give each its own port`,
        });
      } else ports.set(port, i);
    }
    checkPeers(list(wg.peers), [...at, "peers"], issues);
  });
  return issues;
}

function checkPeers(peers: unknown[], at: PathSegment[], issues: WireguardIssue[]): void {
  const keys = new Map<string, number>();
  const taken: { cidr: Cidr; peer: number; index: number }[] = [];
  peers.forEach((p, j) => {
    const peer = obj(p);
    const key = str(peer?.public_key);
    if (key !== undefined) {
      const first = keys.get(key);
      if (first !== undefined) {
        issues.push({
          segments: [...at, j, "public_key"],
          message: `peer ${JSON.stringify(key)} is listed twice`,
          hint: `also at peers[${first}]; merge the two entries`,
        });
      } else keys.set(key, j);
    }
    list(peer?.allowed_ips).forEach((text, k) => {
      const cidr = typeof text === "string" ? parseCidr(text) : undefined;
      if (!cidr) return;
      const clash = taken.find((t) => t.peer !== j && overlaps(t.cidr, cidr));
      if (clash) {
        issues.push({
          segments: [...at, j, "allowed_ips", k],
          message: `allowed IP ${formatCidr(networkOf(cidr))} overlaps ${
            formatCidr(networkOf(clash.cidr))
          } of peers[${clash.peer}]`,
          hint: "an address is routed to one peer only: give each peer its own networks",
        });
      }
      taken.push({ cidr, peer: j, index: k });
    });
  });
}

/** True when two networks share an address: the shorter prefix contains the other. */
export function overlaps(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const prefix = Math.min(a.prefix, b.prefix);
  const na = networkOf({ ...a, prefix }), nb = networkOf({ ...b, prefix });
  return na.bytes.every((x, i) => x === nb.bytes[i]);
}
