/**
 * Redaction per role, through apid: readers see service environment names
 * but not values (ServiceSpec over Get/List/Watch, MachineConfig, ServiceList);
 * operators and admins see the values; nobody sees the CA private key; readers
 * do not get the config's hash either.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import type { JsonObject } from "@bufbuild/protobuf";
import { configSha256, parseMachineConfig } from "../../config/mod.ts";
import type { Role } from "../../pki/mod.ts";
import type { MachineConfigSpec, ServiceSpecSpec } from "../../resources/mod.ts";
import { fakeServiceSpec, startApiFixture } from "../testing.ts";
import type { Resource } from "../gen/machined/v1/resources_pb.ts";
import { redactArgv, REDACTED, redactMachineConfig, redactResource } from "./redaction.ts";

const ROLES: Role[] = ["os:admin", "os:operator", "os:reader"];
const ENV = { API_TOKEN: "s3cret", LOG_LEVEL: "debug" };
const HIDDEN = { API_TOKEN: REDACTED, LOG_LEVEL: REDACTED };

function configYaml(caCrt: string, caKey: string): string {
  const indent = (pem: string) => pem.trim().split("\n").map((l) => `      ${l}`).join("\n");
  return `version: v1alpha1
machine:
  hostname: n1
  services:
    - id: web
      command: ["/bin/web"]
      env:
        API_TOKEN: s3cret
        LOG_LEVEL: debug
  ca:
    crt: |
${indent(caCrt)}
    key: |
${indent(caKey)}
`;
}

function envOf(r: Resource | undefined): unknown {
  if (r?.spec.case !== "serviceSpec") throw new Error(`not a ServiceSpec: ${r?.spec.case}`);
  return { ...r.spec.value.env };
}

function machineOf(r: Resource | undefined): JsonObject {
  if (r?.spec.case !== "machineConfig") throw new Error(`not a MachineConfig: ${r?.spec.case}`);
  return (r.spec.value.config as JsonObject).machine as JsonObject;
}

Deno.test("RBAC redaction: env values are hidden from readers only; the CA key from everyone", async () => {
  const f = await startApiFixture();
  const parsed = parseMachineConfig(configYaml(f.pki.ca.certPem, f.pki.ca.keyPem), "test.yaml");
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
  f.store.create({
    type: "MachineConfig",
    namespace: "config",
    id: "v1alpha1",
    owner: "test",
    spec: {
      source: "test.yaml",
      config: parsed.config,
      sha256: configSha256(parsed.config),
      // As written, secrets included: only the API's redaction stands between them and a caller.
      document: parsed.document,
    } satisfies MachineConfigSpec,
  });
  const web: ServiceSpecSpec = { ...fakeServiceSpec(["/bin/web"]), env: ENV };
  f.store.create({
    type: "ServiceSpec",
    namespace: "runtime",
    id: "web",
    owner: "test",
    spec: web,
  });
  f.services.add("web", web);
  try {
    for (const role of ROLES) {
      const c = f.client(f.pki.clients[role]).api;
      const want = role === "os:reader" ? HIDDEN : ENV;

      const got = await c.get({ type: "ServiceSpec", id: "web" });
      deepEqual(envOf(got.resource), want, `${role} Get ServiceSpec`);
      const listed = await c.list({ type: "ServiceSpec" });
      deepEqual(
        envOf(listed.resources.find((r) => r.metadata?.id === "web")),
        want,
        `${role} List`,
      );
      for await (const e of c.watch({ type: "ServiceSpec", id: "web" })) {
        if (e.event.case !== "created") throw new Error(`first watch event ${e.event.case}`);
        deepEqual(envOf(e.event.value), want, `${role} Watch`);
        break;
      }
      const svc = (await c.serviceList({})).services.find((s) => s.id === "web");
      deepEqual({ ...svc?.spec?.env }, want, `${role} ServiceList`);

      const mcResource = (await c.get({ type: "mc", id: "v1alpha1" })).resource;
      // A hash over the env values would let a reader test guesses of them offline.
      equal(
        mcResource?.spec.case === "machineConfig" ? mcResource.spec.value.sha256 : "?",
        role === "os:reader" ? REDACTED : configSha256(parsed.config),
        `${role} MachineConfig sha256`,
      );
      const mc = machineOf(mcResource);
      const ca = mc.ca as JsonObject;
      equal(ca.key, REDACTED, `${role} never sees the CA key`);
      equal(ca.crt, f.pki.ca.certPem.trim() + "\n", `${role} sees the CA certificate`);
      const services = mc.services as JsonObject[];
      deepEqual(services[0].env, want, `${role} MachineConfig env`);
      // The config as written (what `machinectl edit` opens) is redacted the same way.
      const doc = mcResource?.spec.case === "machineConfig"
        ? (mcResource.spec.value.document as JsonObject).machine as JsonObject
        : {};
      equal((doc.ca as JsonObject).key, REDACTED, `${role} MachineConfig document CA key`);
      deepEqual((doc.services as JsonObject[])[0].env, want, `${role} MachineConfig document env`);
      const listedMc = machineOf((await c.list({ type: "mc" })).resources[0]);
      equal((listedMc.ca as JsonObject).key, REDACTED, `${role} List MachineConfig`);
    }
    // The operator's ServiceRestart answer carries values; no reader can call it.
    const op = f.client(f.pki.clients["os:operator"]).api;
    deepEqual({ ...(await op.serviceRestart({ id: "web" })).service?.spec?.env }, ENV);
    // And the store itself is untouched.
    deepEqual(f.store.get("ServiceSpec", "runtime", "web").spec.env, ENV);
  } finally {
    await f.close();
  }
});

Deno.test("redaction shares one frozen copy per resource and visibility", () => {
  const r = Object.freeze({
    metadata: { type: "ServiceSpec" as const } as never,
    spec: Object.freeze({ ...fakeServiceSpec(["/x"]), env: { A: "1" } }),
  });
  const a = redactResource(r, "os:reader");
  ok(a !== r && Object.isFrozen(a));
  equal(redactResource(r, "os:reader"), a);
  equal(redactResource(r, "os:operator"), r, "privileged callers get the resource itself");
  const status = Object.freeze({ metadata: { type: "MachineStatus" as const } as never, spec: {} });
  equal(redactResource(status as never, "os:reader"), status);
});

Deno.test("redactArgv: env values are hidden in argv from readers, longest first, short ones kept", () => {
  deepEqual(
    redactArgv(["app", "--token=abcd1234", "--x=ab"], ["abcd", "abcd1234", "ab"], "reader"),
    ["app", "--token=(redacted)", "--x=ab"],
  );
  deepEqual(redactArgv(["app", "--token=abcd1234"], ["abcd1234"], "privileged"), [
    "app",
    "--token=abcd1234",
  ]);
});

Deno.test("RBAC redaction: a volume's static passphrase is hidden from every role", () => {
  const parsed = parseMachineConfig(
    `version: v1alpha1
machine:
  hostname: n1
  install:
    disk: /dev/vda
    encryption:
      state:
        keys:
          - { slot: 0, kind: static, passphrase: correct-horse-battery }
          - { slot: 1, kind: nodeid }
`,
    "t.yaml",
  );
  ok(parsed.ok);
  const spec: MachineConfigSpec = { source: "t.yaml", config: parsed.config };
  for (const v of ["reader", "privileged"] as const) {
    const out = redactMachineConfig(spec, v);
    const keys = out.config.machine.install?.encryption?.state?.keys ?? [];
    equal(keys[0].passphrase, REDACTED, v);
    equal(keys[1].kind, "nodeid", v);
    ok(!JSON.stringify(out).includes("correct-horse"), v);
  }
  equal(
    parsed.config.machine.install?.encryption?.state?.keys[0].passphrase,
    "correct-horse-battery",
  );
});
