import assert from "node:assert/strict";
import { parseMachineConfig } from "./parse_machine_config.ts";

function parse(firewall: string, extra = "") {
  return parseMachineConfig(
    `version: v1alpha1\nmachine:\n  hostname: node-1\n${extra}  network:\n    firewall:\n${firewall}`,
    "t.yaml",
  );
}

function errors(firewall: string, extra = ""): string[] {
  const r = parse(firewall, extra);
  assert.ok(!r.ok, "expected errors, got a valid config");
  return r.errors.map((e) => e.format());
}

Deno.test("firewall: defaults, port ranges as text, sources and exceptions", () => {
  const r = parse(`      default: block
      admin_subnets: [192.168.1.0/24]
      rules:
        - { name: web, ports: [443, "8000-8100"], protocol: tcp, sources: [10.0.0.0/8], except: [10.0.99.0/24] }
`);
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  const fw = r.config.machine.network!.firewall!;
  assert.equal(fw.default, "block");
  assert.equal(fw.icmp_rate, 20);
  assert.deepEqual(fw.rules[0].ports, ["443", "8000-8100"]);
  assert.deepEqual(fw.rules[0].except, ["10.0.99.0/24"]);
});

Deno.test("firewall: block without admin_subnets is refused (it would close the API)", () => {
  assert.deepEqual(errors("      default: block\n"), [
    't.yaml:5:5: machine.network.firewall.admin_subnets: a "block" firewall without admin_subnets would close the API (port 50000) (list the subnets you manage the node from; port 50000 stays open to them)',
  ]);
});

Deno.test("firewall: a rule naming the API port needs admin_subnets, the port from api.listen", () => {
  const rule =
    '      rules: [{ name: api, ports: ["49000-51000"], protocol: tcp, sources: [10.0.0.0/8] }]\n';
  assert.match(errors(rule)[0], /rule 0 names the API port 50000/);
  // The API on another port: the same rule does not touch it.
  assert.ok(parse(rule, '  api:\n    listen: "0.0.0.0:6443"\n').ok);
  assert.match(
    errors(rule.replace("49000-51000", "6443"), '  api:\n    listen: "0.0.0.0:6443"\n')[0],
    /API port 6443/,
  );
  // udp on the API port closes nothing.
  assert.ok(parse(rule.replace("tcp", "udp")).ok);
});

Deno.test("firewall: malformed ports, subnets and protocols are refused with the value", () => {
  const e = errors(`      rules:
        - { name: a, ports: ["9-1", 70000], protocol: sctp, sources: [10.0.0.1/8, nope] }
`);
  assert.ok(e.some((m) => m.includes('invalid port or range "9-1"')), e.join("\n"));
  assert.ok(e.some((m) => m.includes("invalid port or range 70000")), e.join("\n"));
  assert.ok(e.some((m) => m.includes('invalid value "sctp"')), e.join("\n"));
  assert.ok(e.some((m) => m.includes('subnet "10.0.0.1/8" has host bits set')), e.join("\n"));
  assert.ok(e.some((m) => m.includes('invalid subnet "nope"')), e.join("\n"));
});
