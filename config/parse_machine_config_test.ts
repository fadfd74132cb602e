import assert from "node:assert/strict";
import { ConfigError } from "./config_error.ts";
import { loadMachineConfig, parseMachineConfig } from "./parse_machine_config.ts";

/** The formatted errors of a config that must not parse. */
function errors(text: string): string[] {
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok, "expected errors, got a valid config");
  return result.errors.map((e) => e.format());
}

/** A config with a valid header; `rest` starts on line 4, indented under `machine:`. */
const withMachine = (rest: string) => `version: v1alpha1\nmachine:\n  hostname: node-1\n${rest}`;

Deno.test("a minimal config gets every default filled", () => {
  const result = parseMachineConfig(withMachine(""), "t.yaml");
  assert.ok(result.ok);
  assert.deepEqual(result.config, {
    version: "v1alpha1",
    machine: {
      hostname: "node-1",
      network: {
        interfaces: [],
        bonds: [],
        vlans: [],
        bridges: [],
        wireguard: [],
        nameservers: [],
        search: [],
        extra_hosts: [],
      },
      time: { disabled: false, servers: ["pool.ntp.org"], sync_interval: 1_024_000 },
      sysctls: {},
      kernel: { args: { add: [], remove: [] }, modules: [] },
      services: [],
      runtime: {
        containerd: {
          enabled: true,
          socket: "/run/containerd/containerd.sock",
          config_extra: "",
        },
      },
      api: {
        listen: "0.0.0.0:50000",
        cert_sans: [],
        max_message_bytes: 4194304,
        max_concurrent_streams: 100,
      },
      logging: { level: "info", ring_lines: 2000 },
      upgrade: { trusted_keys: [], trial_deadline: 15 * 60_000, boot_tries: 3 },
      trusted_roots: [],
      seccomp_profiles: {},
    },
  });
});

Deno.test("nested defaults: interface, route, service, health, limits", () => {
  const result = parseMachineConfig(
    withMachine(`  network:
    interfaces:
      - name: eth0
        routes: [{ to: default, via: "fd00::1" }, { to: 10.1.0.0/16 }]
  services:
    - id: web
      command: [/usr/bin/web]
      env: { PORT: 8080, DEBUG: false, NAME: web }
      health: { http: { url: "http://127.0.0.1:8080/healthz" } }
      limits: { memory_max: 512Mi, cpu_max: 0.5, pids_max: 64 }
  sysctls: { net.ipv4.ip_forward: 1, vm.swappiness: "10" }
`),
    "t.yaml",
  );
  assert.ok(result.ok, !result.ok ? result.errors.map((e) => e.format()).join("\n") : "");
  const m = result.config.machine;
  assert.deepEqual(m.network.interfaces[0], {
    name: "eth0",
    up: true,
    dhcp: false,
    addresses: [],
    routes: [
      { to: "::/0", via: "fd00::1", metric: 1024 },
      { to: "10.1.0.0/16", metric: 1024 },
    ],
  });
  assert.deepEqual(m.services[0], {
    id: "web",
    command: ["/usr/bin/web"],
    env: { PORT: "8080", DEBUG: "false", NAME: "web" },
    cwd: "/",
    user: 0,
    group: 0,
    depends_on: [],
    restart: "always",
    restart_on_trusted_roots: false,
    stop_grace_period: 10_000,
    on_dependency_restart: "restart",
    health: {
      http: { url: "http://127.0.0.1:8080/healthz" },
      interval: 5000,
      timeout: 2000,
      start_period: 0,
      success_threshold: 1,
      failure_threshold: 3,
    },
    limits: { memory_max: 536870912, cpu_max: "50000 100000", pids_max: 64 },
    sandbox: {
      seccomp: "default",
      capabilities: [],
      no_new_privs: true,
      read_only_paths: [],
      masked_paths: [],
    },
  });
  assert.deepEqual(m.sysctls, { "net.ipv4.ip_forward": "1", "vm.swappiness": "10" });
});

Deno.test("an empty section means all defaults; an empty required key reads as missing", () => {
  const ok = parseMachineConfig(withMachine("  time:\n  network:\n"), "t.yaml");
  assert.ok(ok.ok);
  assert.equal(ok.config.machine.time.servers[0], "pool.ntp.org");
  assert.deepEqual(errors("version: v1alpha1\nmachine:\n  hostname:\n"), [
    't.yaml:3:3: machine.hostname: required key "hostname" has no value',
  ]);
});

Deno.test("unknown keys name their path and position and suggest the right key", () => {
  assert.deepEqual(errors("version: v1alpha1\nmachine:\n  hostnme: node-1\n"), [
    't.yaml:3:3: machine.hostnme: unknown key "hostnme" (did you mean "hostname"?)',
  ]);
  assert.deepEqual(
    errors(withMachine("  network:\n    interfaces:\n      - name: eth0\n        adresses: []\n")),
    [
      't.yaml:7:9: machine.network.interfaces[0].adresses: unknown key "adresses" (did you mean "addresses"?)',
    ],
  );
  assert.deepEqual(
    errors(withMachine("  services:\n    - id: a\n      command: [/a]\n      dependsOn: []\n")),
    [
      't.yaml:7:7: machine.services[0].dependsOn: unknown key "dependsOn" (did you mean "depends_on"?)',
    ],
  );
  assert.deepEqual(errors(withMachine("  time: { servers: [], frobnicate: 1 }\n")), [
    't.yaml:4:24: machine.time.frobnicate: unknown key "frobnicate" (allowed keys: disabled, servers, sync_interval)',
  ]);
});

Deno.test("missing required keys point at the mapping that lacks them", () => {
  assert.deepEqual(
    errors(withMachine("  install: { wipe: true }\n  services:\n    - command: [/bin/x]\n")),
    [
      't.yaml:4:3: machine.install.disk: missing required key "disk"',
      't.yaml:6:7: machine.services[0].id: missing required key "id"',
    ],
  );
  assert.deepEqual(errors("version: v1alpha1\n"), [
    't.yaml:1:1: machine: missing required key "machine"',
  ]);
});

Deno.test("type errors say what was expected and what was found", () => {
  assert.deepEqual(
    errors(withMachine(`  network:
    interfaces:
      - name: eth0
        mtu: "1500"
        up: 1
        dhcp: yes
        addresses: 10.0.0.2/24
`)),
    [
      't.yaml:7:14: machine.network.interfaces[0].mtu: expected mtu as an integer, got string "1500" (write 1500 without quotes)',
      "t.yaml:8:13: machine.network.interfaces[0].up: expected true or false, got number 1",
      't.yaml:9:15: machine.network.interfaces[0].dhcp: expected true or false, got string "yes" (YAML 1.2 reads yes/no/on/off as strings; write true or false)',
      't.yaml:10:20: machine.network.interfaces[0].addresses: expected a list of address/prefix strings, got string "10.0.0.2/24"',
    ],
  );
  assert.deepEqual(errors("version: v1alpha1\nmachine: [a, b]\n"), [
    "t.yaml:2:10: machine: expected a mapping, got a list",
  ]);
  assert.deepEqual(errors("- version\n"), [
    "t.yaml:1:1: expected a mapping, got a list",
  ]);
});

Deno.test("value errors quote the value and hint at the fix", () => {
  assert.deepEqual(
    errors(`version: v1alpha2
machine:
  hostname: Node-1
  network:
    interfaces: [{ name: eth0, mtu: 67 }]
  services:
    - id: a
      command: [sleep, "1"]
      restart: allways
      stop_grace_period: "10"
      limits: { memory_max: 512Mb, cpu_max: "0.001" }
  api: { listen: "0.0.0.0:70000" }
  install: { disk: vda }
`),
    [
      't.yaml:1:10: version: invalid value "v1alpha2"; expected one of "v1alpha1" (did you mean "v1alpha1"?)',
      't.yaml:3:13: machine.hostname: invalid hostname "Node-1" (use lowercase: "node-1")',
      "t.yaml:5:37: machine.network.interfaces[0].mtu: mtu 67 is out of range 68..65535",
      't.yaml:8:16: machine.services[0].command: argv[0] "sleep" is not an absolute path (machined does not search PATH; write e.g. "/usr/bin/sleep")',
      't.yaml:9:16: machine.services[0].restart: invalid value "allways"; expected one of "always", "on-failure", "never" (did you mean "always"?)',
      't.yaml:10:26: machine.services[0].stop_grace_period: invalid duration "10" (add a unit, e.g. "10s")',
      't.yaml:11:29: machine.services[0].limits.memory_max: invalid size "512Mb" (use a whole number of bytes or a unit: "64Ki", "512Mi", "2Gi", "1G")',
      't.yaml:11:45: machine.services[0].limits.cpu_max: invalid cpu_max "0.001" (a CPU count (0.01 or more, e.g. 0.5) or cgroup form "<quota|max> <period>" in µs)',
      't.yaml:12:18: machine.api.listen: invalid address "0.0.0.0:70000" (use "ip:port" or "[ipv6]:port", e.g. "0.0.0.0:50000" or "[::]:50000")',
      't.yaml:13:20: machine.install.disk: disk path "vda" is not absolute (write "/vda")',
    ],
  );
});

Deno.test("every error in a file is reported, sorted by position", () => {
  const found = errors(`version: v1alpha1
machine:
  hostnme: node-1
  network:
    interfaces:
      - name: eth0
        mtu: 20
        addresses: ["10.0.0.2/24", "010.0.0.3/24"]
      - name: eth0
  sysctls: { "bad name": 1 }
  services:
    - id: a
      command: [/a]
      depends_on: [b, nope]
    - id: b
      command: [/b]
      depends_on: [a]
    - id: containerd
      command: [/c]
`);
  assert.deepEqual(found, [
    't.yaml:3:3: machine.hostnme: unknown key "hostnme" (did you mean "hostname"?)',
    "t.yaml:7:14: machine.network.interfaces[0].mtu: mtu 20 is out of range 68..65535",
    't.yaml:8:36: machine.network.interfaces[0].addresses[1]: invalid address/prefix "010.0.0.3/24"',
    't.yaml:9:15: machine.network.interfaces[1].name: duplicate interface "eth0" (first configured at machine.network.interfaces[0]; merge the two entries)',
    't.yaml:10:14: machine.sysctls["bad name"]: invalid sysctl name "bad name" (a dotted name under /proc/sys, e.g. "net.ipv4.ip_forward")',
    "t.yaml:14:20: machine.services[0].depends_on[0]: dependency cycle: a -> b -> a",
    't.yaml:14:23: machine.services[0].depends_on[1]: depends on unknown service "nope"',
    't.yaml:18:11: machine.services[2].id: service id "containerd" is reserved for the built-in containerd (choose another id; to run after it, write depends_on: [containerd])',
  ]);
});

Deno.test("YAML syntax errors carry their position and are reported alone", () => {
  const result = parseMachineConfig(
    "version: v1alpha1\nmachine:\n  hostname: [a\n  x: y\n",
    "t.yaml",
  );
  assert.ok(!result.ok);
  assert.ok(result.errors.length >= 1);
  for (const e of result.errors) {
    assert.equal(e.kind, "syntax");
    assert.ok(e.line >= 3, e.format());
    assert.match(e.format(), /^t\.yaml:\d+:\d+: YAML: /);
  }
  assert.deepEqual(errors("version: v1alpha1\nversion: v1alpha1\n"), [
    't.yaml:2:1: version: duplicate key "version" (first defined at line 1)',
  ]);
  assert.deepEqual(errors("a: 1\n---\nb: 2\n"), [
    "t.yaml:2:1: YAML: the file holds more than one YAML document; a machine config is one (remove the `---`)",
  ]);
  assert.deepEqual(errors("version: v1alpha1\nmachine:\n\thostname: x\n"), [
    "t.yaml:3:1: YAML: Tabs are not allowed as indentation",
  ]);
});

Deno.test("an empty file is one error", () => {
  for (const text of ["", "# only a comment\n", "~\n"]) {
    assert.deepEqual(errors(text), [
      "t.yaml:1:1: the config is empty (start with `version: v1alpha1` and a `machine:` section)",
    ]);
  }
});

Deno.test("aliases resolve; an alias explosion is refused", () => {
  const ok = parseMachineConfig(
    withMachine(
      "  services:\n    - { id: a, command: &cmd [/bin/x] }\n    - { id: b, command: *cmd }\n",
    ),
    "t.yaml",
  );
  assert.ok(ok.ok);
  assert.deepEqual(ok.config.machine.services[1].command, ["/bin/x"]);
  const bomb = [
    "a: &a [x, x, x, x, x, x, x, x, x, x]",
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
  ].join("\n");
  const [only, ...rest] = errors(bomb);
  assert.equal(rest.length, 0);
  assert.match(only, /^t\.yaml:1:1: cannot expand document: aliases expand more than 100 times/);
});

Deno.test("loadMachineConfig reads a file; an unreadable one is an io error with its cause", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/node.yaml`;
    await Deno.writeTextFile(path, withMachine(""));
    const ok = await loadMachineConfig(path);
    assert.ok(ok.ok);
    const missing = await loadMachineConfig(`${dir}/absent.yaml`);
    assert.ok(!missing.ok);
    const [e] = missing.errors;
    assert.ok(e instanceof ConfigError);
    assert.equal(e.kind, "io");
    assert.ok(e.cause instanceof Deno.errors.NotFound);
    assert.match(e.format(), new RegExp(`^${dir}/absent\\.yaml: cannot read config file: `));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
