import assert from "node:assert/strict";
import { defaultDevConfig, renderConfigTemplate } from "./config_template.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

function parse(text: string) {
  const result = parseMachineConfig(text, "template.yaml");
  assert.ok(result.ok, result.ok ? "" : result.errors.map((e) => e.format()).join("\n"));
  return result.config;
}

Deno.test("the default template parses back without errors", () => {
  const config = parse(renderConfigTemplate({ hostname: "node-1" }));
  assert.equal(config.machine.hostname, "node-1");
  assert.deepEqual(config.machine.network.interfaces.map((i) => [i.name, i.dhcp]), [[
    "eth0",
    true,
  ]]);
  assert.equal(config.machine.install, undefined);
  assert.deepEqual(config.machine.services, []);
  assert.equal(config.machine.runtime.containerd.enabled, true);
});

Deno.test("a fully specified template round-trips every option", () => {
  const config = parse(renderConfigTemplate({
    hostname: "edge-7",
    domainname: "example.org",
    installDisk: "/dev/nvme0n1",
    installSystem: true,
    interfaces: [
      { name: "eth0", addresses: ["10.0.0.7/24", "fd00::7/64"], gateway: "10.0.0.1" },
      { name: "eth1", dhcp: true },
    ],
    nameservers: ["1.1.1.1", "2606:4700:4700::1111"],
    timeServers: ["time.cloudflare.com"],
    apiListen: "[::]:50000",
    payload: { id: "app", command: ["/usr/bin/app", "--flag=1"], dependsOnContainerd: true },
  }));
  const m = config.machine;
  assert.equal(m.domainname, "example.org");
  assert.deepEqual(m.install, { disk: "/dev/nvme0n1", wipe: false, system: true });
  assert.deepEqual(m.network.interfaces[0].addresses, ["10.0.0.7/24", "fd00::7/64"]);
  assert.deepEqual(m.network.interfaces[0].routes, [
    { to: "0.0.0.0/0", via: "10.0.0.1", metric: 1024 },
  ]);
  assert.equal(m.network.interfaces[0].dhcp, false);
  assert.equal(m.network.interfaces[1].dhcp, true);
  assert.deepEqual(m.network.nameservers, ["1.1.1.1", "2606:4700:4700::1111"]);
  assert.deepEqual(m.time.servers, ["time.cloudflare.com"]);
  assert.equal(m.api.listen, "[::]:50000");
  assert.deepEqual(m.services.map((s) => [s.id, s.command, s.depends_on]), [
    ["app", ["/usr/bin/app", "--flag=1"], ["containerd"]],
  ]);
});

Deno.test("values YAML would misread are quoted", () => {
  const config = parse(renderConfigTemplate({
    hostname: "yes",
    payload: { command: ["/bin/echo", "true", "1", "a: b", "#x", "null"] },
  }));
  assert.equal(config.machine.hostname, "yes");
  assert.deepEqual(config.machine.services[0].command, [
    "/bin/echo",
    "true",
    "1",
    "a: b",
    "#x",
    "null",
  ]);
});

Deno.test("the dev config leaves host links and clock alone and listens on loopback", () => {
  const text = defaultDevConfig("dev-box");
  assert.match(text, /^# /m, "the template is commented");
  const { machine } = parse(text);
  assert.equal(machine.hostname, "dev-box");
  assert.deepEqual(machine.network.interfaces, []);
  assert.equal(machine.time.disabled, true);
  assert.equal(machine.api.listen, "127.0.0.1:50000");
  assert.equal(machine.runtime.containerd.enabled, false);
  assert.deepEqual(machine.services.map((s) => [s.id, s.command, s.depends_on]), [
    ["payload", ["/usr/bin/sleep", "infinity"], []],
  ]);
});

/** PEM-shaped text; only the shape is checked by config/ (pki/ checks the key fits). */
function fakePem(label: string): string {
  const body = btoa(String.fromCharCode(...new Uint8Array(96).map((_, i) => (i * 37) % 256)));
  return `-----BEGIN ${label}-----\n${
    body.match(/.{1,64}/g)!.join("\n")
  }\n-----END ${label}-----\n`;
}

Deno.test("an embedded CA round-trips as PEM block scalars", () => {
  const ca = { certPem: fakePem("CERTIFICATE"), keyPem: fakePem("PRIVATE KEY") };
  const text = renderConfigTemplate({ hostname: "node-1", ca, certSans: ["node-1.example.org"] });
  const { machine } = parse(text);
  assert.deepEqual(machine.ca, { crt: ca.certPem, key: ca.keyPem });
  assert.deepEqual(machine.api.cert_sans, ["node-1.example.org"]);
});

Deno.test("a CA that is not PEM is rejected with its path", () => {
  const text = renderConfigTemplate({
    hostname: "node-1",
    ca: { certPem: "not a certificate", keyPem: fakePem("PRIVATE KEY") },
  });
  const result = parseMachineConfig(text, "t.yaml");
  assert.ok(!result.ok);
  assert.deepEqual(result.errors.map((e) => [e.path, e.message]), [
    ["machine.ca.crt", "not a PEM certificate"],
  ]);
});
