/**
 * A dry-run ApplyConfiguration against machined's real ConfigModes, through
 * apid over mutual TLS: the diff, domains, hashes and verdict it answers, that
 * it changes nothing (read back from the keeper, STATE and the API), that an
 * invalid config is refused exactly as a real apply refuses it, that no secret
 * value ever shows in the diff, and that it takes the apply's role.
 */
import { deepEqual, doesNotMatch, equal, match, ok } from "node:assert/strict";
import { Code, type ConnectError } from "@connectrpc/connect";
import { ApplyConfigurationResponseSchema } from "../../api/gen/machined/v1/machine_pb.ts";
import { ApplyMode } from "../../api/gen/machined/v1/resources_pb.ts";
import { configSha256 } from "../mod.ts";
import { rejection, startKeeperNode } from "../../api/testing_config_node.ts";

const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;
const LISTEN = "  api:\n    listen: 0.0.0.0:50001\n";

/** A node running `image`, with a dry-run call of a whole config. */
async function node(image: string) {
  const n = await startKeeperNode(image);
  equal(n.imageState, "valid");
  const api = n.f.client(n.f.pki.clients["os:admin"]).api;
  return {
    ...n,
    api,
    dry: (text: string, mode = ApplyMode.AUTO) =>
      api.applyConfiguration({ configYaml: text, dryRun: true, mode }),
    [Symbol.asyncDispose]: n.close,
  };
}

Deno.test("dry run of the config in force: no diff, equal hashes, nothing differs", async () => {
  await using n = await node(cfg("a"));
  // Spelled differently (a comment, quotes): the same document.
  const r = await n.dry(`# same\n${cfg("'a'")}`);
  equal(r.applied, false);
  equal(r.diff, "");
  deepEqual([r.changed, r.domains], [[], []]);
  equal(r.differs, false);
  equal(r.currentSha256, r.requestedSha256);
  // The hash MachineConfig shows over the API is the one the dry run compares.
  const got = (await n.api.get({ type: "MachineConfig", id: "v1alpha1" })).resource;
  equal(got?.spec.case === "machineConfig" ? got.spec.value.sha256 : "", r.currentSha256);
  equal(r.currentSha256, configSha256(n.keeper.config));
  equal(r.refusal, "");
});

Deno.test("dry run of a hostname change: the diff names it, domain network, no reboot, nothing changes", async () => {
  await using n = await node(cfg("a"));
  const before = await n.snapshot();
  const r = await n.dry(cfg("b"));
  match(r.diff, /^--- in force\n\+\+\+ requested\n@@ /);
  match(r.diff, /\n- {2}hostname: a\n\+ {2}hostname: b\n/);
  deepEqual(r.changed, ["machine.hostname"]);
  deepEqual(r.domains, ["network"]);
  equal(r.mode, ApplyMode.NO_REBOOT);
  deepEqual([r.reboots, r.refusal, r.differs, r.diffTruncated], [false, "", true, false]);
  equal(r.requestedSha256.length, 64);
  ok(r.requestedSha256 !== r.currentSha256);
  deepEqual(await n.snapshot(), before);
  equal(n.keeper.config?.machine.hostname, "a");
  const got = (await n.api.get({ type: "MachineConfig", id: "v1alpha1" })).resource;
  equal(got?.spec.case === "machineConfig" ? got.spec.value.sha256 : "", r.currentSha256);
});

Deno.test("dry run of a reboot-only change: no-reboot and try say refused, auto says reboot; nothing changes", async () => {
  await using n = await node(cfg("a"));
  const before = await n.snapshot();
  for (const mode of [ApplyMode.NO_REBOOT, ApplyMode.TRY]) {
    const r = await n.dry(cfg("a", LISTEN), mode);
    match(
      r.refusal,
      /^Cannot apply with mode (no-reboot|try): machine\.api\.listen needs a reboot/,
    );
    equal(r.reboots, false);
    deepEqual(r.rebootFields, ["machine.api.listen"]);
    deepEqual(r.domains, ["api"]);
    // Defaults are filled in on both sides: only the listen line changes.
    match(r.diff, /\n- {4}listen: 0\.0\.0\.0:50000\n\+ {4}listen: 0\.0\.0\.0:50001\n/);
  }
  const auto = await n.dry(cfg("a", LISTEN));
  deepEqual([auto.mode, auto.reboots, auto.refusal], [ApplyMode.REBOOT, true, ""]);
  const staged = await n.dry(cfg("a", LISTEN), ApplyMode.STAGED);
  deepEqual([staged.mode, staged.reboots, staged.refusal], [ApplyMode.STAGED, false, ""]);
  deepEqual(await n.snapshot(), before);
  // A bad try timeout is a bad request, not a verdict: refused as the apply refuses it.
  const e = await rejection(() =>
    n.api.applyConfiguration({
      configYaml: cfg("b"),
      dryRun: true,
      mode: ApplyMode.TRY,
      tryTimeoutMs: 10,
    })
  );
  equal(e.code, Code.InvalidArgument);
});

Deno.test("dry run of an invalid config: the same code, message and line:column as the apply", async () => {
  await using n = await node(cfg("a"));
  const before = await n.snapshot();
  const bad = cfg("b", "  hostnme: x\n  sysctls: 3\n");
  const dry = await rejection(() => n.dry(bad));
  const real = await rejection(() => n.api.applyConfiguration({ configYaml: bad }));
  equal(dry.code, Code.InvalidArgument);
  equal(dry.code, real.code);
  equal(dry.rawMessage, real.rawMessage);
  const where = (e: ConnectError) =>
    e.findDetails(ApplyConfigurationResponseSchema)[0].errors.map((x) =>
      `${x.line}:${x.column}: ${x.path}`
    );
  deepEqual(where(dry), where(real));
  match(where(dry)[0], /^4:3: machine\.hostnme$/);
  deepEqual(await n.snapshot(), before);
});

const pem = (label: string, body: string) =>
  `|\n      -----BEGIN ${label}-----\n      ${body}\n      -----END ${label}-----\n`;
const withSecrets = (key: string, token: string) =>
  cfg(
    "a",
    `  services:\n    - id: web\n      command: [/bin/web]\n      env:\n        API_TOKEN: ${token}\n` +
      `  ca:\n    crt: ${pem("CERTIFICATE", "MIIBszCCAVmgAwIBAgIU")}` +
      `    key: ${pem("EC PRIVATE KEY", key)}`,
  );

Deno.test("a changed secret shows as (changed, redacted): neither value is ever in the diff", async () => {
  const OLD_KEY = "OLDcaKEYmaterial0123456789", NEW_KEY = "NEWcaKEYmaterial9876543210";
  const OLD_TOKEN = "old-t0ken-value", NEW_TOKEN = "new-t0ken-value";
  await using n = await node(withSecrets(OLD_KEY, OLD_TOKEN));
  const r = await n.dry(withSecrets(NEW_KEY, NEW_TOKEN));
  for (const secret of [OLD_KEY, NEW_KEY, OLD_TOKEN, NEW_TOKEN]) {
    ok(!r.diff.includes(secret), `the diff shows ${secret}`);
  }
  match(r.diff, /\n- {4}key: \(redacted\)\n\+ {4}key: \(changed, redacted\)\n/);
  match(r.diff, /\n-\s+API_TOKEN: \(redacted\)\n\+\s+API_TOKEN: \(changed, redacted\)\n/);
  deepEqual(r.changed, ["machine.ca.key", "machine.services"]);
  deepEqual(r.domains, ["api", "services"]);
  equal(r.differs, true);
  // The same secrets: nothing differs, and the hash says so.
  const same = await n.dry(withSecrets(OLD_KEY, OLD_TOKEN));
  deepEqual([same.diff, same.differs], ["", false]);
  doesNotMatch(JSON.stringify(same), /OLDcaKEY|old-t0ken/);
});

Deno.test("a dry run takes the apply's role: operators and readers are refused", async () => {
  await using n = await node(cfg("a"));
  for (const role of ["os:operator", "os:reader"] as const) {
    const api = n.f.client(n.f.pki.clients[role]).api;
    const e = await rejection(() => api.applyConfiguration({ configYaml: cfg("b"), dryRun: true }));
    equal(e.code, Code.PermissionDenied, role);
    match(e.rawMessage, /ApplyConfiguration.*needs "os:admin"/);
  }
});
