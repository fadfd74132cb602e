/**
 * ApplyConfiguration with patches against machined's real ConfigModes,
 * through apid over mutual TLS: patches apply to the config in force as
 * written, secrets included (which the caller never sees), then validate and
 * apply as a whole config does; a base hash that is not the config in force's
 * is Aborted; a patch that cannot apply is InvalidArgument naming where; in
 * every refusal nothing moves and no secret is quoted; admin only.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  ApplyConfigurationResponseSchema,
  ConfigPatchType,
} from "../../api/gen/machined/v1/machine_pb.ts";
import { ApplyMode } from "../../api/gen/machined/v1/resources_pb.ts";
import { configSha256 } from "../mod.ts";
import { rejection, startKeeperNode } from "../../api/testing_config_node.ts";

const KEY = "PATCHcaKEYmaterial0123456789";
const TOKEN = "patch-t0ken-value";
const pem = (label: string, body: string) =>
  `|\n      -----BEGIN ${label}-----\n      ${body}\n      -----END ${label}-----\n`;
const IMAGE = "# keep me\nversion: v1alpha1\nmachine:\n  hostname: a # and me\n" +
  "  services:\n    - id: web\n      command: [/bin/web]\n      env:\n        API_TOKEN: " + TOKEN +
  "\n      health:\n        tcp:\n          address: 127.0.0.1:80\n        interval: 30s\n" +
  `  ca:\n    crt: ${pem("CERTIFICATE", "MIIBszCCAVmgAwIBAgIU")}` +
  `    key: ${pem("EC PRIVATE KEY", KEY)}`;

/** A node running the image above, with a call that sends patches. */
async function node() {
  const n = await startKeeperNode(IMAGE);
  equal(n.imageState, "valid");
  const api = n.f.client(n.f.pki.clients["os:admin"]).api;
  return {
    ...n,
    api,
    patch: (
      patches: { type?: ConfigPatchType; text: string }[],
      o: { dryRun?: boolean; baseSha256?: string } = {},
    ) => api.applyConfiguration({ patches, mode: ApplyMode.NO_REBOOT, ...o }),
    [Symbol.asyncDispose]: n.close,
  };
}

const noSecret = (text: string) => {
  for (const s of [KEY, TOKEN]) ok(!text.includes(s), `${s} is quoted`);
};

Deno.test("a JSON patch and a YAML merge patch apply over the config in force; secrets and units kept", async () => {
  await using n = await node();
  const base = configSha256(n.keeper.config);
  const r = await n.patch([
    {
      type: ConfigPatchType.JSON,
      text: '[{"op":"replace","path":"/machine/hostname","value":"b"}]',
    },
    { text: "machine:\n  sysctls:\n    vm.swappiness: 10\n" },
  ], { baseSha256: base });
  equal(r.applied, true);
  deepEqual(r.changed, ["machine.hostname", "machine.sysctls.vm.swappiness"]);
  equal(r.currentSha256, base);
  const c = n.keeper.config!;
  equal(c.machine.hostname, "b");
  // The text in force was edited in place: its comments survive the patch.
  match(n.keeper.text!, /^# keep me\n/);
  match(n.keeper.text!, /\n {2}hostname: b # and me\n/);
  equal(c.machine.ca?.key.includes(KEY), true, "the CA key the client never sent is kept");
  equal(c.machine.services?.[0].env?.API_TOKEN, TOKEN);
  equal(c.machine.services?.[0].health?.interval, 30_000);
  // The document the next patch applies to, as written: 30s stays 30s, the key redacted.
  const got = (await n.api.get({ type: "MachineConfig", id: "v1alpha1" })).resource;
  const spec = got?.spec.case === "machineConfig" ? got.spec.value : undefined;
  const doc = spec?.document as JsonObject;
  const machine = doc.machine as JsonObject;
  equal(machine.hostname, "b");
  deepEqual((machine.ca as JsonObject).key, "(redacted)");
  equal(((machine.services as JsonObject[])[0].health as JsonObject).interval, "30s");
  equal(spec?.sha256, configSha256(c));
  equal(spec?.sha256, r.requestedSha256);
});

Deno.test("a dry-run patch answers the diff and changes nothing", async () => {
  await using n = await node();
  const before = await n.snapshot();
  const r = await n.patch([{ text: "machine: {hostname: c}" }], { dryRun: true });
  equal(r.applied, false);
  match(r.diff, /\n- {2}hostname: a\n\+ {2}hostname: c\n/);
  noSecret(r.diff);
  deepEqual(await n.snapshot(), before);
});

Deno.test("a base hash other than the config in force's is Aborted and changes nothing", async () => {
  await using n = await node();
  const before = await n.snapshot();
  const stale = "0".repeat(64);
  for (const dryRun of [false, true]) {
    const e = await rejection(() =>
      n.patch([{ text: "machine: {hostname: c}" }], { baseSha256: stale, dryRun })
    );
    equal(e.code, Code.Aborted);
    match(
      e.rawMessage,
      /not the one this change was based on: its sha256 is [0-9a-f]{64}, the request expected 0{64}; nothing was changed/,
    );
  }
  // A whole config takes the same check.
  const e = await rejection(() =>
    n.api.applyConfiguration({
      configYaml: IMAGE.replace("hostname: a", "hostname: c"),
      baseSha256: stale,
    })
  );
  equal(e.code, Code.Aborted);
  deepEqual(await n.snapshot(), before);
});

Deno.test("a patch that cannot apply is InvalidArgument naming patch, operation and pointer; no secret quoted; nothing changes", async () => {
  await using n = await node();
  const before = await n.snapshot();
  const cases: [string, RegExp][] = [
    [
      '[{"op":"replace","path":"/machine/hostname","value":"b"},{"op":"remove","path":"/machine/nope"}]',
      /^patch 0, operation 1 \(remove\), at "\/machine\/nope": no value there/,
    ],
    [
      `[{"op":"test","path":"/machine/ca/key","value":"${KEY}"}]`,
      /^patch 0, operation 0 \(test\), at "\/machine\/ca\/key": a test at or above a secret/,
    ],
    [
      '[{"op":"copy","from":"/machine/ca/key","path":"/machine/hostname"}]',
      /^patch 0, operation 0 \(copy\), at "\/machine\/ca\/key": a copy from a secret/,
    ],
    [
      '{"machine":{"ca":{"key":"(redacted)"}}}',
      /^at "\/machine\/ca\/key": the patch would write the placeholder "\(redacted\)"/,
    ],
    ["[{op: frob}]", /^patch 0, operation 0: op must be one of/],
    ["a: [", /^patch 0, line 1: /],
  ];
  for (const [text, want] of cases) {
    const e = await rejection(() => n.patch([{ text }]));
    equal(e.code, Code.InvalidArgument, text);
    match(e.rawMessage, want);
    noSecret(e.rawMessage);
  }
  // A patched config that does not validate: refused as the whole config would be.
  const e = await rejection(() => n.patch([{ text: "machine: {hostname: 3, hostnme: x}" }]));
  equal(e.code, Code.InvalidArgument);
  match(e.rawMessage, /^Machine config is invalid \(2 errors\)/);
  equal(e.findDetails(ApplyConfigurationResponseSchema)[0].errors.length, 2);
  noSecret(e.rawMessage);
  // config_yaml and patches together, or neither.
  for (const req of [{ configYaml: IMAGE, patches: [{ text: "{}" }] }, {}]) {
    equal((await rejection(() => n.api.applyConfiguration(req))).code, Code.InvalidArgument);
  }
  deepEqual(await n.snapshot(), before);
});

Deno.test("patches take the apply's role: operators and readers are refused", async () => {
  await using n = await node();
  for (const role of ["os:operator", "os:reader"] as const) {
    const api = n.f.client(n.f.pki.clients[role]).api;
    const e = await rejection(() =>
      api.applyConfiguration({ patches: [{ text: "machine: {hostname: c}" }] })
    );
    equal(e.code, Code.PermissionDenied, role);
  }
  equal(n.keeper.config?.machine.hostname, "a");
});
