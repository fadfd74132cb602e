import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import type { MachineConfig } from "../../config/mod.ts";
import type { DhcpLeaseSpec, LinkStatusSpec } from "../../resources/mod.ts";
import { linkSpecs } from "./link_config.ts";
import { addressSpecs } from "./address_config.ts";
import { routeSpecs } from "./route_config.ts";
import { hostnameSpec } from "./hostname_config.ts";
import { resolverSpec } from "./resolver_config.ts";
import { configYaml } from "./testing.ts";

function config(network: string, extra = ""): MachineConfig {
  const r = parseMachineConfig(configYaml(network, extra), "t.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

const LEASE: DhcpLeaseSpec = {
  link: "eth0",
  state: "bound",
  address: "10.0.0.50",
  prefixLen: 24,
  server: "10.0.0.1",
  routers: ["10.0.0.1"],
  dnsServers: ["10.0.0.53", "1.1.1.1"],
  domain: "lan.example",
  hostname: "leased",
};

const link = (
  name: string,
  index: number,
  extra: Partial<LinkStatusSpec> = {},
): LinkStatusSpec => ({
  name,
  index,
  type: "ether",
  kind: "",
  mac: "02:00:00:00:00:01",
  mtu: 1500,
  up: false,
  operstate: "down",
  physical: true,
  master: "",
  ours: false,
  ...extra,
});

Deno.test("links: configured ones as given, lo always up, DHCP implies up", () => {
  const c = config(`    interfaces:
      - { name: eth0, mtu: 9000 }
      - { name: eth1, up: false, dhcp: true }
      - { name: eth2, up: false }
`);
  assert.deepEqual(linkSpecs(c, [link("eth9", 2)], true), [
    { name: "eth0", up: true, mtu: 9000, dhcp: false, origin: "config" },
    { name: "eth1", up: true, dhcp: true, origin: "config" },
    { name: "eth2", up: false, dhcp: false, origin: "config" },
    { name: "lo", up: true, dhcp: false, origin: "default" },
  ]);
});

Deno.test("links: with no interface the lowest-index physical link gets DHCP", () => {
  const c = config("    interfaces: []\n");
  const links = [
    link("lo", 1, { type: "loopback", physical: false }),
    link("veth0", 2, { kind: "veth", physical: false }),
    link("enp2s0", 4),
    link("enp1s0", 3),
  ];
  assert.deepEqual(linkSpecs(c, links, true).map((l) => [l.name, l.dhcp]), [
    ["lo", false],
    ["enp1s0", true],
  ]);
  assert.deepEqual(linkSpecs(c, links, false).map((l) => l.name), ["lo"]);
  assert.deepEqual(linkSpecs(c, [], true).map((l) => l.name), ["lo"], "no physical link yet");
});

Deno.test("addresses: canonical text, static wins over the leased one", () => {
  const c = config(`    interfaces:
      - { name: eth0, dhcp: true, addresses: ["10.0.0.50/24", "FD00:0:0::2/64"] }
`);
  assert.deepEqual(addressSpecs(c, [LEASE]), [
    { link: "eth0", family: "inet", address: "10.0.0.50", prefixLen: 24, origin: "static" },
    { link: "eth0", family: "inet6", address: "fd00::2", prefixLen: 64, origin: "static" },
  ]);
  const plain = config("    interfaces:\n      - { name: eth0, dhcp: true }\n");
  assert.deepEqual(addressSpecs(plain, [LEASE]), [
    { link: "eth0", family: "inet", address: "10.0.0.50", prefixLen: 24, origin: "dhcp" },
  ]);
});

Deno.test("routes: config routes, the lease's default route unless config has one", () => {
  const c = config(`    interfaces:
      - name: eth0
        dhcp: true
        routes:
          - { to: 10.1.0.0/16, via: 10.0.0.254, metric: 10 }
          - { to: "fd01::/64" }
`);
  assert.deepEqual(routeSpecs(c, [LEASE]), [
    {
      link: "eth0",
      family: "inet",
      dst: "10.1.0.0",
      dstLen: 16,
      gateway: "10.0.0.254",
      metric: 10,
      origin: "static",
    },
    { link: "eth0", family: "inet6", dst: "fd01::", dstLen: 64, metric: 1024, origin: "static" },
    {
      link: "eth0",
      family: "inet",
      dst: "0.0.0.0",
      dstLen: 0,
      gateway: "10.0.0.1",
      metric: 1024,
      origin: "dhcp",
    },
  ]);
  const withDefault = config(`    interfaces:
      - name: eth0
        dhcp: true
        routes: [{ to: default, via: 10.0.0.9 }]
`);
  assert.deepEqual(
    routeSpecs(withDefault, [LEASE]).map((r) => [r.gateway, r.origin]),
    [["10.0.0.9", "static"]],
  );
});

Deno.test("hostname: config wins; the lease fills in the domain", () => {
  assert.deepEqual(hostnameSpec(config("    interfaces: []\n"), [LEASE]), {
    hostname: "node-1",
    domainname: "lan.example",
    origin: "config",
  });
  assert.deepEqual(
    hostnameSpec(config("    interfaces: []\n", "  domainname: corp.example\n"), [LEASE]),
    { hostname: "node-1", domainname: "corp.example", origin: "config" },
  );
  assert.deepEqual(hostnameSpec(config("    interfaces: []\n"), []), {
    hostname: "node-1",
    domainname: "",
    origin: "config",
  });
});

Deno.test("resolvers: config first, then DHCP, deduplicated and cut to 3; domain searched first", () => {
  const c = config(
    `    interfaces: []
    nameservers: ["1.1.1.1", "2606:4700:4700:0::1111"]
    search: ["example.org", "corp.example"]
`,
    "  domainname: corp.example\n",
  );
  assert.deepEqual(resolverSpec(c, [LEASE]), {
    nameservers: ["1.1.1.1", "2606:4700:4700::1111", "10.0.0.53"],
    search: ["corp.example", "example.org", "lan.example"],
  });
  assert.deepEqual(resolverSpec(config("    interfaces: []\n"), []), {
    nameservers: [],
    search: [],
  });
});
