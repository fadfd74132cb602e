import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  SERVICE_SPEC,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { processSandbox } from "../../supervisor/mod.ts";
import { serviceSpecController, serviceSpecsFromConfig } from "./service_spec_controller.ts";

const YAML = `
version: v1alpha1
machine:
  hostname: node-1
  services:
    - id: payload
      command: ["/usr/bin/sleep", "infinity"]
      env: { MODE: prod, LEVEL: 3 }
      depends_on: [containerd]
      restart: on-failure
      stop_grace_period: 3s
      on_dependency_restart: hold
      health:
        tcp: { address: "127.0.0.1:8080" }
        interval: 2s
        failure_threshold: 4
      limits: { memory_max: 64Mi, cpu_max: 0.5, pids_max: 100 }
  runtime:
    containerd:
      socket: /run/ctd/ctd.sock
      config_extra: |
        [plugins."io.containerd.grpc.v1.cri"]
        enable_cdi = true
`;

function parse(yaml: string) {
  const r = parseMachineConfig(yaml, "test.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

Deno.test("config services and the built-in containerd become ServiceSpecs", () => {
  const specs = serviceSpecsFromConfig(parse(YAML));
  assert.deepEqual([...specs.keys()], ["containerd", "payload"]);
  const payload = specs.get("payload")!;
  assert.deepEqual(payload.command, ["/usr/bin/sleep", "infinity"]);
  assert.deepEqual(payload.env, { MODE: "prod", LEVEL: "3" });
  assert.deepEqual(payload.dependsOn, ["containerd"]);
  assert.equal(payload.restart, "on-failure");
  assert.equal(payload.stopGraceMs, 3000);
  assert.equal(payload.onDependencyRestart, "hold");
  assert.deepEqual(payload.health?.probe, { kind: "tcp", address: "127.0.0.1:8080" });
  assert.equal(payload.health?.intervalMs, 2000);
  assert.equal(payload.health?.failureThreshold, 4);
  assert.equal(payload.health?.restartWhenUnhealthy, false);
  assert.deepEqual(payload.limits, { memoryMax: 64 << 20, cpuMax: "50000 100000", pidsMax: 100 });

  const ctd = specs.get("containerd")!;
  assert.equal(ctd.builtin, true);
  assert.deepEqual(ctd.health?.probe, { kind: "cri", socket: "/run/ctd/ctd.sock" });
  assert.equal(ctd.health?.restartWhenUnhealthy, true);
  assert.deepEqual(ctd.command, [
    "/usr/bin/containerd",
    "--config",
    "/run/machined/containerd/config.toml",
  ]);
  const toml = ctd.files[0].content;
  assert.match(toml, /^version = 2$/m);
  assert.match(toml, /^root = "\/var\/lib\/containerd"$/m);
  assert.match(toml, /^\[grpc\]\n {2}address = "\/run\/ctd\/ctd.sock"$/m);
  assert.ok(toml.endsWith('[plugins."io.containerd.grpc.v1.cri"]\nenable_cdi = true\n'));
  assert.ok(ctd.dirs.includes("/run/ctd"));
});

Deno.test("containerd can be turned off", () => {
  const cfg = parse(
    "version: v1alpha1\nmachine:\n  hostname: n\n  runtime:\n    containerd:\n      enabled: false\n",
  );
  assert.equal(serviceSpecsFromConfig(cfg).size, 0);
});

Deno.test("ServiceSpecController follows config changes without a restart", async () => {
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(serviceSpecController({ containerd: { root: "/tmp/x" } }));
  runtime.start();
  try {
    const set = (yaml: string) =>
      store.modify(
        { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
        "test",
        () => ({ source: "test", config: parse(yaml) }),
      );
    await set(YAML);
    const p = await waitForResource(store, SERVICE_SPEC, (r) => r.metadata.id === "payload");
    assert.equal(p.spec.restart, "on-failure");
    const c = await waitForResource(store, SERVICE_SPEC, (r) => r.metadata.id === "containerd");
    assert.match(c.spec.files[0].content, /root = "\/tmp\/x"/);
    await set(YAML.replace("restart: on-failure", "restart: never"));
    await waitForResource(
      store,
      SERVICE_SPEC,
      (r) => r.metadata.id === "payload" && r.spec.restart === "never",
    );
    await set("version: v1alpha1\nmachine:\n  hostname: node-1\n");
    await waitForAbsence(store, SERVICE_SPEC, (r) => r.metadata.id === "payload");
    assert.ok(store.find(SERVICE_SPEC, "runtime", "containerd"));
  } finally {
    await runtime.stop();
  }
});

Deno.test("config to process: payloads get the default sandbox, containerd none", () => {
  const config = parse(
    [
      "version: v1alpha1",
      "machine:",
      "  hostname: n",
      "  runtime: { containerd: { enabled: true } }",
      "  services:",
      "    - id: payload",
      "      command: [/usr/bin/payload]",
      "    - id: ntp",
      "      command: [/usr/bin/ntp]",
      "      sandbox: { capabilities: [CAP_SYS_TIME], seccomp: unconfined, no_new_privs: false }",
    ].join("\n"),
  );
  const specs = serviceSpecsFromConfig(config);
  assert.deepEqual(processSandbox(specs.get("payload")!), {
    noNewPrivs: true,
    sandbox: { seccomp: "default", capabilities: [] },
  });
  assert.deepEqual(processSandbox(specs.get("ntp")!), {
    noNewPrivs: false,
    sandbox: { seccomp: "unconfined", capabilities: ["CAP_SYS_TIME"] },
  });
  assert.deepEqual(processSandbox(specs.get("containerd")!), {
    noNewPrivs: false,
    sandbox: { seccomp: "unconfined" },
  });
});
