import assert from "node:assert/strict";
import { compileFirewall, inputChain, networks, portSet } from "./compile.ts";
import type { FirewallIntent } from "./intent.ts";

const base: FirewallIntent = {
  default: "block",
  rules: [],
  adminSubnets: ["192.168.1.0/24"],
  icmpRate: 20,
  apiPort: 50000,
};

/** The index of the first chain line matching `re`; fails when none does. */
function at(lines: string[], re: RegExp): number {
  const i = lines.findIndex((l) => re.test(l));
  assert.ok(i >= 0, `no line matches ${re}:\n${lines.join("\n")}`);
  return i;
}

Deno.test("compile: one transaction that replaces only table inet machined", () => {
  const text = compileFirewall(base);
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 3), [
    "add table inet machined",
    "delete table inet machined",
    "table inet machined {",
  ]);
  assert.match(text, /type filter hook input priority filter; policy drop;/);
  assert.equal((text.match(/^table /gm) ?? []).length, 1);
  assert.doesNotMatch(text, /flush ruleset|table ip |table ip6 /);
  assert.equal(compileFirewall(base), text, "the same intent gives the same text");
  assert.match(compileFirewall({ ...base, default: "accept" }), /policy accept;/);
});

Deno.test("compile: loopback and established/related first, invalid dropped after ND and DHCP", () => {
  const c = inputChain(base);
  assert.equal(at(c, /^iif "lo" accept/), 0);
  assert.equal(at(c, /^ct state established,related accept/), 1);
  const invalid = at(c, /^ct state invalid drop/);
  assert.ok(at(c, /nd-neighbor-solicit/) < invalid);
  assert.ok(at(c, /udp sport 67 udp dport 68 accept/) < invalid);
  assert.ok(at(c, /udp sport 547 udp dport 546 accept/) < invalid);
});

Deno.test("compile: ND, router solicitation/advertisement never limited, hop limit 255", () => {
  for (const mode of ["accept", "block"] as const) {
    const c = inputChain({ ...base, default: mode });
    const nd = c[at(c, /nd-router-advert/)];
    for (const t of ["nd-router-solicit", "nd-neighbor-solicit", "nd-neighbor-advert"]) {
      assert.ok(nd.includes(t), nd);
    }
    assert.match(nd, /ip6 hoplimit 255 accept/);
    assert.doesNotMatch(nd, /limit rate/);
    assert.ok(at(c, /nd-router-advert/) < at(c, /limit rate/));
  }
});

Deno.test("compile: ICMP and ICMPv6 rate-limited, the rest dropped", () => {
  const c = inputChain({ ...base, default: "accept", icmpRate: 7 });
  assert.match(c[at(c, /meta l4proto 1 limit/)], /limit rate 7\/second burst 14 packets accept/);
  assert.match(c[at(c, /meta l4proto 58 limit/)], /limit rate 7\/second/);
  assert.ok(at(c, /limit rate/) < at(c, /^meta l4proto \{ 1, 58 \} drop/));
});

Deno.test("Talos failure mode: ICMP passing in block mode (echo dropped, errors limited)", () => {
  const c = inputChain(base);
  assert.ok(!c.some((l) => /echo-request/.test(l) && /accept/.test(l)), c.join("\n"));
  assert.ok(!c.some((l) => /^meta l4proto (1|58) .*accept/.test(l)), c.join("\n"));
  assert.match(c[at(c, /^icmp type/)], /destination-unreachable.*limit rate 20\/second.*accept/);
  assert.match(c[at(c, /^icmpv6 type \{ destination/)], /packet-too-big.*limit rate/);
  assert.ok(at(c, /^icmpv6 type \{ destination/) < at(c, /\{ 1, 58 \} drop/));
});

Deno.test("compile: the API port is open to every admin subnet, before any rule", () => {
  const c = inputChain({
    ...base,
    default: "accept",
    adminSubnets: ["192.168.1.0/24", "fd00::/8"],
    rules: [{
      name: "api",
      protocol: "tcp",
      ports: ["50000"],
      sources: ["10.9.0.0/16"],
      except: [],
    }],
  });
  const v4 = at(c, /^tcp dport \{ 50000 \} ip saddr \{ 192\.168\.1\.0\/24 \} accept/);
  const v6 = at(c, /^tcp dport \{ 50000 \} ip6 saddr \{ fd00::\/8 \} accept/);
  assert.ok(Math.max(v4, v6) < at(c, /rule api/));
  assert.ok(Math.max(v4, v6) < at(c, /restricted ports/));
  const other = inputChain({ ...base, apiPort: 6443 });
  at(other, /^tcp dport \{ 6443 \} ip saddr \{ 192\.168\.1\.0\/24 \} accept/);
});

Deno.test("compile: a rule with sources and exceptions, per family; no sources means all", () => {
  const c = inputChain({
    ...base,
    rules: [
      {
        name: "web",
        protocol: "tcp",
        ports: ["443", "8000-8100"],
        sources: ["10.0.0.0/8", "fd00::/8"],
        except: ["10.0.99.0/24"],
      },
      { name: "dns", protocol: "udp", ports: ["53"], sources: [], except: ["fd00:1::/64"] },
    ],
  });
  assert.deepEqual(c.filter((l) => /rule (web|dns)/.test(l)), [
    'tcp dport { 443, 8000-8100 } ip saddr { 10.0.0.0/8 } ip saddr != { 10.0.99.0/24 } accept comment "rule web"',
    'tcp dport { 443, 8000-8100 } ip6 saddr { fd00::/8 } accept comment "rule web"',
    'udp dport { 53 } ip saddr { 0.0.0.0/0 } accept comment "rule dns"',
    'udp dport { 53 } ip6 saddr { ::/0 } ip6 saddr != { fd00:1::/64 } accept comment "rule dns"',
  ]);
  assert.ok(!c.some((l) => /restricted ports/.test(l)), "block mode leaves the rest to the policy");
});

Deno.test("Talos failure mode: an unrelated rule cutting discovery (accept mode restricts only its ports)", () => {
  const c = inputChain({
    ...base,
    default: "accept",
    rules: [{
      name: "kubelet",
      protocol: "tcp",
      ports: ["10250"],
      sources: ["10.0.0.0/8"],
      except: [],
    }],
  });
  const drops = c.filter((l) => / drop/.test(l) && !/invalid|icmp/.test(l));
  assert.deepEqual(drops, ['tcp dport { 10250 } drop comment "restricted ports"']);
  assert.ok(!c.some((l) => /^udp dport .* drop/.test(l)), "UDP discovery (e.g. 51820) untouched");
});

Deno.test("compile: a rule never shadows another's sources on the same port", () => {
  const c = inputChain({
    ...base,
    default: "accept",
    rules: [
      {
        name: "a",
        protocol: "tcp",
        ports: ["22"],
        sources: ["10.0.0.0/8"],
        except: ["10.0.99.0/24"],
      },
      { name: "b", protocol: "tcp", ports: ["22"], sources: ["10.0.99.0/24"], except: [] },
    ],
  });
  assert.ok(at(c, /rule b/) < at(c, /restricted ports/));
  assert.ok(!c.slice(0, at(c, /rule b/)).some((l) => /dport \{ 22 \}.* drop/.test(l)));
});

Deno.test("Talos failure mode: allow-everything breaking DNS/NTP (replies accepted before any rule)", () => {
  const c = inputChain({
    ...base,
    default: "accept",
    rules: [
      { name: "all-udp", protocol: "udp", ports: ["1-65535"], sources: ["10.0.0.0/8"], except: [] },
      { name: "all-tcp", protocol: "tcp", ports: ["1-65535"], sources: ["10.0.0.0/8"], except: [] },
    ],
  });
  const replies = at(c, /^ct state established,related accept/);
  c.forEach((l, i) => {
    if (/ drop/.test(l)) assert.ok(i > replies, `${l} comes before the replies' accept`);
  });
  at(c, /^udp dport \{ 1-65535 \} drop/);
});

Deno.test("Talos failure mode: established replies dropped (block mode accepts them first)", () => {
  const c = inputChain(base);
  assert.equal(at(c, /^ct state established,related accept/), 1);
  assert.ok(!c.slice(0, 1).some((l) => / drop/.test(l)));
  // DHCP's broadcast replies match no conntrack entry: accepted by port, before invalid.
  at(c, /^udp sport 67 udp dport 68 accept/);
});

Deno.test("portSet merges overlapping and touching ranges; networks drops nested subnets", () => {
  assert.equal(portSet(["8050-8200", "443", "8000-8100", "8201", "22"]), "{ 22, 443, 8000-8201 }");
  assert.deepEqual(networks(["10.1.0.0/16", "10.0.0.0/8", "fd00::/8", "11.0.0.0/8"], 4), [
    "10.0.0.0/8",
    "11.0.0.0/8",
  ]);
  assert.deepEqual(networks(["fd00:1::/64", "fd00::/8", "10.0.0.0/8"], 6), ["fd00::/8"]);
});

Deno.test("compile: protocols after l4proto are numbers, so nft needs no /etc/protocols (the node has none)", () => {
  for (const mode of ["accept", "block"] as const) {
    const c = inputChain({ ...base, default: mode });
    const named = c.filter((l) => /l4proto (\{ )?[a-z]/.test(l));
    assert.deepEqual(named, [], `named protocols in ${mode} mode`);
  }
});
