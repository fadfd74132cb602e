import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  SERVICE_SPEC,
  TRUSTED_ROOTS_STATUS,
  TRUSTED_ROOTS_STATUS_ID,
  type TrustedRootsStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { serviceSpecController, serviceSpecsFromConfig } from "./service_spec_controller.ts";

const BUNDLE = "/run/machined/trust/ca-certificates.crt";
const YAML = `version: v1alpha1
machine:
  hostname: n
  services:
    - id: plain
      command: [/bin/plain]
    - id: picky
      command: [/bin/picky]
      restart_on_trusted_roots: true
    - id: own
      command: [/bin/own]
      env: { SSL_CERT_FILE: /etc/own.pem }
`;

function parse(yaml: string) {
  const r = parseMachineConfig(yaml, "t");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

function bundle(sha256: string): TrustedRootsStatusSpec {
  return {
    path: BUNDLE,
    sha256,
    systemBundle: "/etc/ssl/certs/ca-certificates.crt",
    systemCertificates: 1,
    systemError: "",
    roots: [],
  };
}

Deno.test("every service sees the bundle; containerd and opted-in services carry its hash", () => {
  const specs = serviceSpecsFromConfig(parse(YAML), undefined, {
    bundlePath: BUNDLE,
    sha256: "aa",
  });
  const env = { SSL_CERT_FILE: BUNDLE, DENO_CERT: BUNDLE };
  assert.deepEqual(specs.get("plain")!.env, env);
  assert.equal(specs.get("plain")!.trustedRootsSha256, undefined);
  assert.equal(specs.get("picky")!.trustedRootsSha256, "aa");
  assert.equal(specs.get("containerd")!.trustedRootsSha256, "aa");
  assert.deepEqual(specs.get("containerd")!.env, env);
  assert.deepEqual(specs.get("own")!.env, { SSL_CERT_FILE: "/etc/own.pem", DENO_CERT: BUNDLE });
  assert.equal(parse(YAML).machine.services[0].restart_on_trusted_roots, false);
  const without = serviceSpecsFromConfig(parse(YAML));
  assert.deepEqual(without.get("plain")!.env, {}, "no bundle option: no variables");
});

Deno.test("specs wait for the bundle; a new bundle changes only containerd's and opted-in specs", async () => {
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(serviceSpecController({ trustedRoots: { bundlePath: BUNDLE } }));
  runtime.start();
  const ptr = {
    type: TRUSTED_ROOTS_STATUS,
    namespace: "runtime",
    id: TRUSTED_ROOTS_STATUS_ID,
  } as const;
  const spec = (id: string, pred = (_: string | undefined) => true) =>
    waitForResource(
      store,
      SERVICE_SPEC,
      (r) => r.metadata.id === id && pred(r.spec.trustedRootsSha256),
    );
  try {
    await store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: parse(YAML) }),
    );
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(store.list(SERVICE_SPEC).length, 0, "no spec before the bundle is written");
    store.create({ ...ptr, owner: "test", spec: bundle("aa") });
    const plain = await spec("plain");
    await spec("containerd", (h) => h === "aa");
    await spec("picky", (h) => h === "aa");
    store.update({
      ...ptr,
      owner: "test",
      version: store.find(TRUSTED_ROOTS_STATUS, "runtime", TRUSTED_ROOTS_STATUS_ID)!.metadata
        .version,
      spec: bundle("bb"),
    });
    await spec("containerd", (h) => h === "bb");
    await spec("picky", (h) => h === "bb");
    const after = store.find(SERVICE_SPEC, "runtime", "plain")!;
    assert.equal(after.metadata.version, plain.metadata.version, "plain is not touched");
  } finally {
    await runtime.stop();
  }
});
