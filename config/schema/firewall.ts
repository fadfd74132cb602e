/**
 * `machine.network.firewall`: the node's ingress firewall. A rule names ports and the source
 * subnets allowed to reach them; traffic to those ports from anywhere else is dropped, in both
 * modes. `default` decides the ports no rule names. The API port stays open to `admin_subnets`
 * whatever the rules say; semantic_checks.ts refuses a firewall that could close it to everyone.
 * What is always allowed (loopback, established replies, IPv6 neighbour discovery) is in
 * docs/network.md.
 *
 * @module
 */
import * as v from "valibot";
import { formatCidr, networkOf, parseCidr } from "../../ip/mod.ts";
import { mapping } from "./mapping.ts";
import { checkWithHint, quote } from "./hints.ts";
import { choice, intRange } from "./primitives.ts";

/** At most this many rules (each compiles to one or two nftables rules). */
export const MAX_FIREWALL_RULES = 256;
/** At most this many subnets in one list. */
export const MAX_FIREWALL_SUBNETS = 256;

/** A port `"8000"` or an inclusive range `"8000-8100"`, as a number pair; undefined if malformed. */
export function parsePortRange(input: unknown): [number, number] | undefined {
  const text = typeof input === "number" ? String(input) : input;
  if (typeof text !== "string") return undefined;
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  if (!m) return undefined;
  const lo = Number(m[1]), hi = Number(m[2] ?? m[1]);
  return lo >= 1 && hi <= 65535 && lo <= hi ? [lo, hi] : undefined;
}

const PortRange = v.pipe(
  v.union([v.number(), v.string()], "expected a port number or a range string"),
  checkWithHint(
    (p: number | string) => parsePortRange(p) !== undefined,
    (issue) => `invalid port or range ${quote(issue.input)}`,
    () => 'a port 1..65535, or a range "8000-8100" with the low end first',
  ),
  v.transform((p) => String(p)),
  v.metadata({ docType: 'port | "low-high"' }),
);

/** A network `10.0.0.0/8` or `fd00::/8`; host bits must be zero (a host is `/32` or `/128`). */
export const Subnet = v.pipe(
  v.string("expected a subnet string"),
  checkWithHint(
    (s: string) => parseCidr(s) !== undefined,
    (issue) => `invalid subnet ${quote(issue.input)}`,
    (s) => /^[0-9a-fA-F.:]+$/.test(String(s)) ? `add a prefix length, e.g. "${s}/32"` : undefined,
  ),
  checkWithHint(
    (s: string) => {
      const c = parseCidr(s);
      return !c || formatCidr(networkOf(c)) === formatCidr(c);
    },
    (issue) => `subnet ${quote(issue.input)} has host bits set`,
    (s) => {
      const c = parseCidr(String(s));
      return c ? `did you mean "${formatCidr(networkOf(c))}"?` : undefined;
    },
  ),
  v.metadata({ docType: "subnet (CIDR)" }),
);

function subnets(what: string) {
  return v.pipe(
    v.array(Subnet, `expected a list of ${what}`),
    v.maxLength(MAX_FIREWALL_SUBNETS, `at most ${MAX_FIREWALL_SUBNETS} ${what}`),
  );
}

/** One ingress rule: who may reach which ports. */
export const FirewallRuleSchema = mapping({
  name: v.pipe(
    v.string("expected a rule name"),
    v.regex(/^[A-Za-z0-9_.-]{1,63}$/, (i) => `invalid rule name ${quote(i.input)}`),
    v.description("Names the rule in FirewallStatus and in the nftables comment."),
    v.examples(["kubelet"]),
  ),
  ports: v.pipe(
    v.array(PortRange, "expected a list of ports"),
    v.minLength(1, "a rule names at least one port"),
    v.maxLength(64, "at most 64 ports or ranges in a rule"),
    v.description("Destination ports: numbers or inclusive ranges."),
    v.examples([["10250", "30000-32767"]]),
  ),
  protocol: v.pipe(choice(["tcp", "udp"] as const), v.description("Transport protocol.")),
  sources: v.optional(
    v.pipe(
      subnets("source subnets"),
      v.description(
        "Source subnets allowed to reach the ports; traffic from anywhere else to them is dropped. Omit or leave empty for every source.",
      ),
      v.examples([["10.0.0.0/8", "fd00::/8"]]),
    ),
    [],
  ),
  except: v.optional(
    v.pipe(
      subnets("excepted subnets"),
      v.description("Subnets inside `sources` that are refused all the same."),
      v.examples([["10.0.99.0/24"]]),
    ),
    [],
  ),
});

/** `machine.network.firewall`. */
export const FirewallSchema = mapping({
  default: v.optional(
    v.pipe(
      choice(["accept", "block"] as const),
      v.description(
        "What happens to new connections to a port no rule names. Established replies, loopback and IPv6 neighbour discovery are always accepted.",
      ),
    ),
    "accept",
  ),
  rules: v.optional(
    v.pipe(
      v.array(FirewallRuleSchema, "expected a list of rules"),
      v.maxLength(MAX_FIREWALL_RULES, `at most ${MAX_FIREWALL_RULES} rules`),
      v.description("Ingress rules, each a set of ports and the sources allowed to reach them."),
    ),
    [],
  ),
  admin_subnets: v.optional(
    v.pipe(
      subnets("admin subnets"),
      v.description(
        "Subnets the API port can never be closed to. Required (at least one) when `default` is `block` or a rule names the API port.",
      ),
      v.examples([["192.168.1.0/24"]]),
    ),
    [],
  ),
  icmp_rate: v.optional(
    v.pipe(
      intRange(1, 100_000, "icmp_rate"),
      v.description(
        "ICMP and ICMPv6 echo and error packets accepted per second (burst twice that); the rest are dropped. Neighbour discovery is not limited.",
      ),
    ),
    20,
  ),
});

/** A parsed firewall section with defaults filled. */
export type FirewallConfig = v.InferOutput<typeof FirewallSchema>;
/** A parsed firewall rule. */
export type FirewallRuleConfig = v.InferOutput<typeof FirewallRuleSchema>;
