import assert from "node:assert/strict";
import { parseMachineConfig } from "./parse_machine_config.ts";
import { configuredLinks } from "./schema/network_links.ts";

const net = (body: string) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  network:\n${body}`;

function errors(text: string): string[] {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok, "expected errors, got a valid config");
  return result.errors.map((e) => e.format());
}

Deno.test("a bond, a VLAN on it and a bridge parse, with defaults, as configured links", () => {
  const r = parseMachineConfig(
    net(`    bonds:
      - name: bond0
        mode: 802.3ad
        ports: [eth0, { mac: "52:54:00:AA:BB:01" }]
        lacp_rate: fast
        xmit_hash_policy: layer3+4
    vlans:
      - { parent: bond0, id: 42, addresses: ["10.42.0.2/24"] }
      - { name: mgmt, parent: eth2, id: 7, dhcp: true }
    bridges:
      - { name: br0, ports: [eth3, eth4], stp: true }
`),
    "t.yaml",
  );
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  const n = r.config.machine.network;
  assert.equal(n.bonds[0].miimon, 100);
  assert.deepEqual(n.bonds[0].ports, ["eth0", { mac: "52:54:00:aa:bb:01" }]);
  assert.equal(n.bonds[0].up, true);
  assert.deepEqual(
    configuredLinks(n).map((l) => [l.name, l.kind, l.dhcp, l.addresses]),
    [
      ["bond0", "bond", false, []],
      ["bond0.42", "vlan", false, ["10.42.0.2/24"]],
      ["mgmt", "vlan", true, []],
      ["br0", "bridge", false, []],
    ],
  );
});

Deno.test("VLAN ids, bond modes and MACs are checked by the schema, with positions", () => {
  assert.deepEqual(
    errors(net(`    vlans: [{ parent: eth0, id: 4095 }]
    bonds: [{ name: bond0, mode: round-robin, ports: [{ mac: "52:54" }] }]
`)),
    [
      "t.yaml:5:33: machine.network.vlans[0].id: VLAN id 4095 is out of range 1..4094",
      't.yaml:6:34: machine.network.bonds[0].mode: expected "active-backup" or "802.3ad", got string "round-robin"',
      't.yaml:6:62: machine.network.bonds[0].ports[0].mac: invalid MAC address "52:54" (six hex pairs separated by ":", e.g. "52:54:00:12:34:56")',
    ],
  );
});

Deno.test("Talos failure mode: a VLAN enslaved to its own bond (refused, as is a VLAN on its bond's port)", () => {
  assert.deepEqual(
    errors(net(`    bonds:
      - { name: bond0, mode: active-backup, ports: [eth0, eth1, bond0.5] }
    vlans:
      - { parent: eth0, id: 5 }
      - { parent: bond0, id: 5 }
`)),
    [
      't.yaml:6:65: machine.network.bonds[0].ports[2]: VLAN "bond0.5" is tagged on "bond0" and cannot be its port (a VLAN rides on top of its bond or bridge; list the physical links as ports)',
      't.yaml:8:19: machine.network.vlans[0].parent: VLAN parent "eth0" is a port of "bond0" (put the VLAN on "bond0": traffic tagged on a port bypasses its master)',
    ],
  );
});

Deno.test("a port in two masters, a port with an address or DHCP, and nesting are refused", () => {
  assert.deepEqual(
    errors(net(`    interfaces:
      - { name: eth0, dhcp: true, addresses: ["10.0.0.2/24"] }
      - { name: eth1, ipv6: { dhcp: true } }
    bonds:
      - { name: bond0, mode: active-backup, ports: [eth0, br0, eth1] }
    bridges:
      - { name: br0, ports: [eth0, bond0] }
`)),
    [
      't.yaml:6:29: machine.network.interfaces[0].dhcp: DHCP on "eth0": it is a port of "bond0" (configure addresses, DHCP and routes on "bond0")',
      't.yaml:6:46: machine.network.interfaces[0].addresses: addresses on "eth0": it is a port of "bond0" (configure addresses, DHCP and routes on "bond0")',
      't.yaml:7:37: machine.network.interfaces[1].ipv6.dhcp: DHCPv6 on "eth1": it is a port of "bond0" (configure addresses, DHCP and routes on "bond0")',
      't.yaml:9:59: machine.network.bonds[0].ports[1]: bridge "br0" cannot be a port of a bond (a bond may be a bridge port; nothing else nests)',
      't.yaml:11:30: machine.network.bridges[0].ports[0]: port "eth0" is already a port of "bond0" (a link can have one master only)',
    ],
  );
});

Deno.test("names: 15 bytes for a default VLAN name, unique across kinds; LACP options need 802.3ad", () => {
  assert.deepEqual(
    errors(net(`    bonds:
      - { name: bond0, mode: active-backup, ports: [eth0], lacp_rate: fast }
    vlans:
      - { parent: enp0s31f6abc, id: 1000 }
    bridges:
      - { name: bond0 }
`)),
    [
      "t.yaml:6:60: machine.network.bonds[0].lacp_rate: lacp_rate applies to mode 802.3ad only (remove it, or set mode: 802.3ad)",
      't.yaml:8:37: machine.network.vlans[0].id: the default VLAN name "enp0s31f6abc.1000" is longer than 15 bytes (set name: to a shorter one)',
      't.yaml:10:17: machine.network.bridges[0].name: link "bond0" is defined twice (also at machine.network.bonds[0])',
    ],
  );
});
