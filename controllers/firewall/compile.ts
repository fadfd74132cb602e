/**
 * The firewall compiler: a {@link FirewallIntent} to the text of one nftables transaction that
 * replaces the table machined owns (`table inet machined`) and nothing else. Pure: the same
 * intent gives the same text, byte for byte, so its hash says what is in force.
 *
 * The input chain, in order (each line is a test in compile_test.ts):
 * 1. loopback, then established/related (replies to what the node started: DNS, NTP, pulls);
 * 2. IPv6 neighbour discovery, router solicitation/advertisement and MLD queries, hop limit 255
 *    where the RFCs require it, never rate-limited (IPv6 stops working without them);
 * 3. DHCP replies to the client (DHCPv4 68, DHCPv6 546): broadcast replies match no conntrack
 *    entry, so established alone would not let them in;
 * 4. conntrack `invalid` dropped;
 * 5. ICMP/ICMPv6 up to `icmpRate` per second (block mode: errors only, no echo), the rest dropped;
 * 6. the API port from the admin subnets;
 * 7. each rule's accepts (sources minus exceptions);
 * 8. in accept mode, the ports rules name, from anyone else, dropped (block mode: the policy).
 * Accepts of every rule come before any rule's drop, so no rule shadows another's sources.
 * @module
 */
import { formatCidr, parseCidr } from "../../ip/mod.ts";
import type { FirewallIntent, FirewallRuleIntent } from "./intent.ts";

/** The one table machined owns; nothing else in the ruleset is touched. */
export const FIREWALL_TABLE = { family: "inet", name: "machined" } as const;

/**
 * The kernel modules the compiled table needs (the Debian cloud kernel builds them as modules):
 * nf_tables itself (inet family, sets, payload and meta matches), nft_ct for `ct state` (it pulls
 * in nf_conntrack) and nft_limit for the ICMP rate. The image loads them at boot (imager's
 * DEFAULT_MODULES): a node has no modprobe for the kernel to request them by.
 */
export const FIREWALL_MODULES = ["nf_tables", "nft_ct", "nft_limit"] as const;

/** ICMPv6 types IPv6 needs to work at all, accepted before any limit. */
const ND_TYPES = [
  "nd-router-solicit",
  "nd-router-advert",
  "nd-neighbor-solicit",
  "nd-neighbor-advert",
] as const;
/** Multicast listener queries/reports (routers and switches with MLD snooping rely on them). */
const MLD_TYPES = ["mld-listener-query", "mld-listener-report", "mld2-listener-report"] as const;
/** ICMP errors a block-mode node still accepts (rate-limited) when conntrack does not relate them. */
const ICMP_ERRORS = ["destination-unreachable", "time-exceeded", "parameter-problem"] as const;
const ICMPV6_ERRORS = [
  "destination-unreachable",
  "packet-too-big",
  "time-exceeded",
  "parameter-problem",
] as const;

/** The transaction text for `nft -f`: create-if-absent, delete, then the whole table. */
export function compileFirewall(intent: FirewallIntent): string {
  const t = `${FIREWALL_TABLE.family} ${FIREWALL_TABLE.name}`;
  const chain = inputChain(intent).map((l) => `\t\t${l}`);
  return [
    `add table ${t}`,
    `delete table ${t}`,
    `table ${t} {`,
    "\tchain input {",
    `\t\ttype filter hook input priority filter; policy ${
      intent.default === "block" ? "drop" : "accept"
    };`,
    ...chain,
    "\t}",
    "}",
    "",
  ].join("\n");
}

/** The input chain's rules, one per line, in the order the module doc gives. */
export function inputChain(intent: FirewallIntent): string[] {
  const block = intent.default === "block";
  const rate = `limit rate ${intent.icmpRate}/second burst ${intent.icmpRate * 2} packets`;
  // Protocol numbers, not names: nft resolves `icmp`/`ipv6-icmp` after `l4proto` through
  // /etc/protocols, which the node's image does not have ("Could not resolve protocol name").
  // 1 is ICMP, 58 ICMPv6.
  const lines = [
    'iif "lo" accept comment "loopback"',
    'ct state established,related accept comment "replies"',
    `icmpv6 type ${set(ND_TYPES)} ip6 hoplimit 255 accept comment "neighbour discovery"`,
    `icmpv6 type ${set(MLD_TYPES)} ip6 saddr fe80::/10 accept comment "multicast listeners"`,
    'udp sport 67 udp dport 68 accept comment "dhcpv4 replies"',
    'ip6 saddr fe80::/10 udp sport 547 udp dport 546 accept comment "dhcpv6 replies"',
    'ct state invalid drop comment "invalid"',
    block
      ? `icmp type ${set(ICMP_ERRORS)} ${rate} accept comment "icmp errors"`
      : `meta l4proto 1 ${rate} accept comment "icmp"`,
    block
      ? `icmpv6 type ${set(ICMPV6_ERRORS)} ${rate} accept comment "icmpv6 errors"`
      : `meta l4proto 58 ${rate} accept comment "icmpv6"`,
    'meta l4proto { 1, 58 } drop comment "icmp over limit"',
    ...sourceAccepts("tcp", [String(intent.apiPort)], intent.adminSubnets, [], "admin api"),
    ...intent.rules.flatMap(ruleAccepts),
  ];
  if (!block) lines.push(...restrictions(intent.rules));
  return lines;
}

function ruleAccepts(r: FirewallRuleIntent): string[] {
  const sources = r.sources.length > 0 ? r.sources : ["0.0.0.0/0", "::/0"];
  return sourceAccepts(r.protocol, r.ports, sources, r.except, `rule ${r.name}`);
}

/** One accept per address family that has sources: the ports, from sources, not from except. */
function sourceAccepts(
  protocol: "tcp" | "udp",
  ports: readonly string[],
  sources: readonly string[],
  except: readonly string[],
  comment: string,
): string[] {
  const out: string[] = [];
  for (const [family, field] of [[4, "ip"], [6, "ip6"]] as const) {
    const src = networks(sources, family);
    if (src.length === 0) continue;
    const ex = networks(except, family);
    const not = ex.length > 0 ? ` ${field} saddr != ${set(ex)}` : "";
    out.push(
      `${protocol} dport ${portSet(ports)} ${field} saddr ${
        set(src)
      }${not} accept comment "${comment}"`,
    );
  }
  return out;
}

/** Accept mode: the ports any rule names are closed to sources no rule allowed. */
function restrictions(rules: readonly FirewallRuleIntent[]): string[] {
  return (["tcp", "udp"] as const).flatMap((p) => {
    const ports = rules.filter((r) => r.protocol === p).flatMap((r) => r.ports);
    return ports.length > 0 ? [`${p} dport ${portSet(ports)} drop comment "restricted ports"`] : [];
  });
}

/** `{ a, b }`; nftables refuses an anonymous set with overlapping intervals, so inputs are merged. */
function set(items: readonly string[]): string {
  return `{ ${items.join(", ")} }`;
}

/** Ports and ranges as one set, sorted, with overlapping or touching ranges merged. */
export function portSet(ports: readonly string[]): string {
  const ranges = ports.map((p) => p.split("-").map(Number)).map(([lo, hi]) => [lo, hi ?? lo])
    .sort((a, b) => a[0] - b[0]);
  const merged: number[][] = [];
  for (const [lo, hi] of ranges) {
    const last = merged[merged.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  return set(merged.map(([lo, hi]) => lo === hi ? String(lo) : `${lo}-${hi}`));
}

/**
 * The networks of one family, canonical (`10.0.0.0/8`), sorted, without those inside another
 * (two CIDRs either nest or are disjoint, so this leaves no overlap).
 */
export function networks(subnets: readonly string[], family: 4 | 6): string[] {
  const cidrs = subnets.map((s) => parseCidr(s)).filter((c) => c !== undefined)
    .filter((c) => c.family === family).sort((a, b) => a.prefix - b.prefix);
  const kept: typeof cidrs = [];
  for (const c of cidrs) {
    if (!kept.some((k) => contains(k, c))) kept.push(c);
  }
  return kept.map(formatCidr).sort();
}

function contains(
  outer: { bytes: Uint8Array; prefix: number },
  inner: { bytes: Uint8Array; prefix: number },
): boolean {
  if (outer.prefix > inner.prefix) return false;
  for (let bit = 0; bit < outer.prefix; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((outer.bytes[bit >> 3] & mask) !== (inner.bytes[bit >> 3] & mask)) return false;
  }
  return true;
}
