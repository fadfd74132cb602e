import assert from "node:assert/strict";
import { parseMachineConfig } from "./parse_machine_config.ts";

function errors(text: string): string[] {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok, "expected errors, got a valid config");
  return result.errors.map((e) => e.format());
}

function valid(text: string): void {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(result.ok, result.ok ? "" : result.errors.map((e) => e.format()).join("\n"));
}

/** Services in flow style, one per line from line 5. */
const services = (...lines: string[]) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  services:\n${
    lines.map((l) => `    - ${l}\n`).join("")
  }`;

Deno.test("duplicate service ids point at the second definition", () => {
  assert.deepEqual(
    errors(services("{ id: a, command: [/a] }", "{ id: a, command: [/b] }")),
    [
      't.yaml:6:13: machine.services[1].id: duplicate service id "a" (first defined at machine.services[0])',
    ],
  );
});

Deno.test("containerd is reserved as an id but may be depended on", () => {
  assert.deepEqual(errors(services("{ id: containerd, command: [/c] }")), [
    't.yaml:5:13: machine.services[0].id: service id "containerd" is reserved for the built-in containerd (choose another id; to run after it, write depends_on: [containerd])',
  ]);
  valid(services("{ id: a, command: [/a], depends_on: [containerd] }"));
});

Deno.test("machined is reserved as a service id: its log is machined's own", () => {
  assert.deepEqual(
    errors(services("{ id: a, command: [/a] }", "{ id: machined, command: [/m] }")),
    [
      't.yaml:6:13: machine.services[1].id: service id "machined" is reserved for machined\'s own log (choose another id; `machinectl logs machined` shows machined itself)',
    ],
  );
});

Deno.test("depending on containerd while it is disabled is an error", () => {
  assert.deepEqual(
    errors(
      services("{ id: a, command: [/a], depends_on: [containerd] }") +
        "  runtime: { containerd: { enabled: false } }\n",
    ),
    [
      't.yaml:5:44: machine.services[0].depends_on[0]: depends on "containerd", which is disabled (machine.runtime.containerd.enabled is false)',
    ],
  );
});

Deno.test("unknown dependencies suggest the nearest service id", () => {
  assert.deepEqual(
    errors(
      services(
        "{ id: database, command: [/db] }",
        "{ id: app, command: [/app], depends_on: [databse, cache] }",
      ),
    ),
    [
      't.yaml:6:48: machine.services[1].depends_on[0]: depends on unknown service "databse" (did you mean "database"?)',
      't.yaml:6:57: machine.services[1].depends_on[1]: depends on unknown service "cache"',
    ],
  );
});

Deno.test("cycles are named, starting at the service defined first", () => {
  assert.deepEqual(errors(services("{ id: a, command: [/a], depends_on: [a] }")), [
    't.yaml:5:44: machine.services[0].depends_on[0]: service "a" depends on itself',
  ]);
  assert.deepEqual(
    errors(services(
      "{ id: x, command: [/x] }",
      "{ id: c, command: [/c], depends_on: [a] }",
      "{ id: a, command: [/a], depends_on: [x, b] }",
      "{ id: b, command: [/b], depends_on: [c] }",
    )),
    ["t.yaml:6:44: machine.services[1].depends_on[0]: dependency cycle: c -> a -> b -> c"],
  );
  // Two separate cycles are both reported; an acyclic diamond is fine.
  assert.deepEqual(
    errors(services(
      "{ id: a, command: [/a], depends_on: [b] }",
      "{ id: b, command: [/b], depends_on: [a] }",
      "{ id: c, command: [/c], depends_on: [d] }",
      "{ id: d, command: [/d], depends_on: [c] }",
    )),
    [
      "t.yaml:5:44: machine.services[0].depends_on[0]: dependency cycle: a -> b -> a",
      "t.yaml:7:44: machine.services[2].depends_on[0]: dependency cycle: c -> d -> c",
    ],
  );
  valid(services(
    "{ id: top, command: [/t], depends_on: [left, right] }",
    "{ id: left, command: [/l], depends_on: [base] }",
    "{ id: right, command: [/r], depends_on: [base, containerd] }",
    "{ id: base, command: [/b] }",
  ));
});

Deno.test("a cycle through a shorter loop inside a larger component names a real cycle", () => {
  // a -> b -> c -> a and b -> a: the shortest path back to a is a -> b -> a.
  assert.deepEqual(
    errors(services(
      "{ id: a, command: [/a], depends_on: [b] }",
      "{ id: b, command: [/b], depends_on: [c, a] }",
      "{ id: c, command: [/c], depends_on: [a] }",
    )),
    ["t.yaml:5:44: machine.services[0].depends_on[0]: dependency cycle: a -> b -> a"],
  );
});

Deno.test("health checks need exactly one probe and a timeout within the interval", () => {
  assert.deepEqual(
    errors(services(
      "{ id: a, command: [/a], health: { interval: 5s } }",
      '{ id: b, command: [/b], health: { exec: { command: [/bin/true] }, tcp: { address: "127.0.0.1:1" } } }',
      '{ id: c, command: [/c], health: { tcp: { address: "127.0.0.1:1" }, timeout: 10s } }',
      '{ id: d, command: [/d], health: { tcp: { address: "127.0.0.1:1" }, interval: 1s } }',
    )),
    [
      "t.yaml:5:39: machine.services[0].health: health check has no probe (set exactly one of exec, tcp, http)",
      "t.yaml:6:73: machine.services[1].health.tcp: health check has both exec and tcp (set exactly one of exec, tcp, http)",
      "t.yaml:7:83: machine.services[2].health.timeout: timeout (10s) is longer than interval (5s) (a probe must finish before the next one starts)",
      "t.yaml:8:84: machine.services[3].health.interval: timeout (2s) is longer than interval (1s) (a probe must finish before the next one starts)",
    ],
  );
});

/** Interfaces in flow style, one per line from line 6. */
const interfaces = (...lines: string[]) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  network:\n    interfaces:\n${
    lines.map((l) => `      - ${l}\n`).join("")
  }`;

Deno.test("interface names and addresses are unique", () => {
  assert.deepEqual(
    errors(interfaces(
      '{ name: eth0, addresses: ["10.0.0.2/24", "fd00::2/64"] }',
      '{ name: eth1, addresses: ["10.0.0.2/16", "FD00:0::2/64"] }',
      "{ name: eth0 }",
    )),
    [
      "t.yaml:7:35: machine.network.interfaces[1].addresses[0]: address 10.0.0.2 is assigned twice (also at machine.network.interfaces[0].addresses[0])",
      "t.yaml:7:50: machine.network.interfaces[1].addresses[1]: address fd00::2 is assigned twice (also at machine.network.interfaces[0].addresses[1])",
      't.yaml:8:17: machine.network.interfaces[2].name: duplicate interface "eth0" (first configured at machine.network.interfaces[0]; merge the two entries)',
    ],
  );
});

Deno.test("routes: via of the destination's family; default needs a via; no host bits", () => {
  assert.deepEqual(
    errors(interfaces(
      '{ name: eth0, routes: [{ to: "10.0.0.0/8", via: "fd00::1" }] }',
      '{ name: eth1, routes: [{ to: "::/0", via: "10.0.0.1" }] }',
      "{ name: eth2, routes: [{ to: default }] }",
      '{ name: eth3, routes: [{ to: "10.1.2.3/16" }, { to: "fd00::1/64" }, { to: "10.0.0.1" }] }',
    )),
    [
      "t.yaml:6:57: machine.network.interfaces[0].routes[0].via: gateway fd00::1 is IPv6 but destination 10.0.0.0/8 is IPv4 (a route's via must be of the same family as its to)",
      "t.yaml:7:51: machine.network.interfaces[1].routes[0].via: gateway 10.0.0.1 is IPv4 but destination ::/0 is IPv6 (a route's via must be of the same family as its to)",
      't.yaml:8:38: machine.network.interfaces[2].routes[0].to: route to "default" without via is ambiguous (write "0.0.0.0/0" or "::/0", or add a via)',
      't.yaml:9:38: machine.network.interfaces[3].routes[0].to: route destination "10.1.2.3/16" has host bits set (did you mean "10.1.0.0/16"?)',
      't.yaml:9:61: machine.network.interfaces[3].routes[1].to: route destination "fd00::1/64" has host bits set (did you mean "fd00::/64"?)',
      't.yaml:9:83: machine.network.interfaces[3].routes[2].to: invalid route destination "10.0.0.1" (add a prefix length, e.g. "10.0.0.1/32")',
    ],
  );
  valid(interfaces(
    '{ name: eth0, addresses: ["10.0.0.2/24"], routes: [{ to: default, via: 10.0.0.1 }, { to: "0.0.0.0/0", via: "10.0.0.254", metric: 2048 }] }',
    '{ name: eth1, addresses: ["fd00::2/64"], routes: [{ to: default, via: "fe80::1" }, { to: "fd01::/16" }] }',
  ));
});

Deno.test("a value the schema rejected is not reported again by a cross-field rule", () => {
  // "A" fails the id pattern; it must not also be called an unknown dependency.
  assert.deepEqual(errors(services("{ id: a, command: [/a], depends_on: [A] }")), [
    "t.yaml:5:44: machine.services[0].depends_on[0]: invalid service id \"A\" (lowercase letters, digits, '.', '_' and '-', at most 63 characters)",
  ]);
});

Deno.test("a service id with control or bidi characters is refused with its path and line:column, shown escaped", () => {
  assert.deepEqual(
    errors(services(
      '{ id: "pay\\e]0;pwned\\a\\e[2J", command: [/a] }',
      '{ id: "b\\n[info] audit: forged", command: [/b] }',
      '{ id: "c\\x9b2J", command: [/c] }',
      '{ id: "d\\u202eexe", command: [/d] }',
    )),
    [
      "t.yaml:5:13: machine.services[0].id: invalid service id \"pay\\u001b]0;pwned\\u0007\\u001b[2J\" (lowercase letters, digits, '.', '_' and '-', at most 63 characters)",
      "t.yaml:6:13: machine.services[1].id: invalid service id \"b\\n[info] audit: forged\" (lowercase letters, digits, '.', '_' and '-', at most 63 characters)",
      "t.yaml:7:13: machine.services[2].id: invalid service id \"c\\u009b2J\" (lowercase letters, digits, '.', '_' and '-', at most 63 characters)",
      "t.yaml:8:13: machine.services[3].id: invalid service id \"d\\u202eexe\" (lowercase letters, digits, '.', '_' and '-', at most 63 characters)",
    ],
  );
});

Deno.test("thousands of services: long chains, long cycles and unknown ids stay bounded errors", () => {
  const many = (n: number, dep: (i: number) => string) =>
    services(
      ...Array.from(
        { length: n },
        (_, i) => `{ id: s${i}, command: [/a], depends_on: [${dep(i)}] }`,
      ),
    );
  valid(many(3000, (i) => (i === 2999 ? "containerd" : `s${i + 1}`)));
  const [cycle, ...rest] = errors(many(3000, (i) => `s${(i + 1) % 3000}`));
  assert.equal(rest.length, 0);
  assert.equal(
    cycle,
    "t.yaml:5:45: machine.services[0].depends_on[0]: dependency cycle: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> (2989 more) -> s2995 -> s2996 -> s2997 -> s2998 -> s2999 -> s0",
  );
  const unknown = errors(many(3000, (i) => `x${i}`));
  assert.equal(unknown.length, 101);
  assert.match(unknown[0], /depends on unknown service "x0" \(did you mean "s0"\?\)$/);
  assert.equal(
    unknown[100],
    "t.yaml:105:47: and 2900 more errors (only the first 100 are reported)",
  );
});
