/**
 * `machinectl patch` and `machinectl edit` against machined's real
 * ConfigModes through apid: patches from files (JSON and YAML, both kinds),
 * a refused patch named by its file, a stale --base-hash; edit with a fake
 * $EDITOR (a shell script) that changes a field, changes nothing, writes an
 * invalid value and then fixes it after reading the node's reasons, or gives
 * up; the CA key and env values the editor saw redacted or never touched
 * stay as they were on the node.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { cfg, startConfigNode } from "./testing_config_node.ts";

const KEY = "EDITcaKEYmaterial0123456789";
const pem = (label: string, body: string) =>
  `|\n      -----BEGIN ${label}-----\n      ${body}\n      -----END ${label}-----\n`;
const IMAGE = cfg(
  "a",
  "  services:\n    - id: web\n      command: [/bin/web]\n      env:\n        API_TOKEN: t0ken\n" +
    `  ca:\n    crt: ${pem("CERTIFICATE", "MIIBszCCAVmgAwIBAgIU")}` +
    `    key: ${pem("EC PRIVATE KEY", KEY)}`,
);

/** Runs `body` with $VISUAL set to a shell script of `script` lines ($1 is the file). */
async function withEditor<T>(dir: string, script: string, body: () => Promise<T>): Promise<T> {
  const path = join(dir, `editor-${crypto.randomUUID()}.sh`);
  await Deno.writeTextFile(path, `#!/bin/sh\nset -e\n${script}\n`);
  await Deno.chmod(path, 0o755);
  const before = Deno.env.get("VISUAL");
  Deno.env.set("VISUAL", path);
  try {
    return await body();
  } finally {
    if (before === undefined) Deno.env.delete("VISUAL");
    else Deno.env.set("VISUAL", before);
  }
}

Deno.test("machinectl patch: JSON and YAML files, inferred kinds, a refusal named by its file, a stale base", async () => {
  const n = await startConfigNode(IMAGE);
  try {
    const json = await n.file(
      "host.json",
      '[{"op":"replace","path":"/machine/hostname","value":"b"}]',
    );
    const merge = await n.file("sysctl.yaml", "machine:\n  sysctls:\n    vm.swappiness: 10\n");
    let r = await n.run("patch", "-p", json, "-p", merge, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /patched config: valid; would apply with mode no-reboot; nothing changed/);
    match(r.out, /\n- {2}hostname: a\n\+ {2}hostname: b\n/);
    equal(n.keeper.config?.machine.hostname, "a");
    const inForce = r.out.match(/sha256 in force: {2}([0-9a-f]{64})/)![1];

    r = await n.run("patch", "-p", json, "--base-hash", "0".repeat(64));
    equal(r.code, 1);
    match(r.err, /not the one this change was based on.*nothing was changed/);
    equal(n.keeper.config?.machine.hostname, "a");

    r = await n.run("patch", "-p", json, "-p", merge, "--base-hash", inForce);
    equal(r.code, 0, r.err);
    match(r.out, /patched config: applied with mode no-reboot on /);
    match(r.out, /changed: machine\.hostname\nchanged: machine\.sysctls\.vm\.swappiness/);
    equal(n.keeper.config?.machine.hostname, "b");
    ok(n.keeper.config?.machine.ca?.key.includes(KEY));

    const bad = await n.file("bad.yaml", "- {op: remove, path: /machine/nope}\n");
    r = await n.run("patch", json, bad);
    equal(r.code, 1);
    match(r.err, /bad\.yaml, operation 0 \(remove\), at "\/machine\/nope": no value there/);
    const invalid = await n.file("invalid.json", '{"machine":{"hostname":"Not A Name"}}');
    r = await n.run("patch", "--type", "merge", "-p", invalid);
    equal(r.code, 1);
    match(r.err, /machine\.hostname: /);
    match(r.err, /the node refused the patches and kept its config/);
    equal(n.keeper.config?.machine.hostname, "b");
    // The redacted rendering written back as the secret is refused by name; the key stays.
    const placeholder = await n.file("key.yaml", 'machine: {ca: {key: "(redacted)"}}');
    r = await n.run("patch", placeholder);
    equal(r.code, 1);
    match(r.err, /at "\/machine\/ca\/key": the patch would write the placeholder "\(redacted\)"/);
    ok(n.keeper.config?.machine.ca?.key.includes(KEY));
    // -n fans a patch out as it does apply-config (here two names of the one node, each dry).
    const port = n.f.endpoint.split(":").at(-1);
    r = await n.run("patch", "-n", `127.0.0.1:${port},localhost:${port}`, "-p", merge, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /127\.0\.0\.1:\d+ +patched config: valid/);
    match(r.out, /localhost:\d+ +patched config: valid/);
    r = await n.run("edit", "-n", `127.0.0.1:${port},localhost:${port}`);
    equal(r.code, 2);
    match(r.err, /edit does not run on several nodes/);
    r = await n.runAs("os:operator", "patch", json);
    equal(r.code, 1);
    match(r.err, /permission denied/);
  } finally {
    await n.close();
  }
});

Deno.test("machinectl edit: a change is applied as a patch; secrets kept; no change sends nothing", async () => {
  const n = await startConfigNode(IMAGE);
  try {
    const seen = join(await n.file("x", ""), "..", "seen.yaml");
    let r = await withEditor(
      n.f.pki.dir,
      `cp "$1" ${seen}\nsed -i 's/hostname: a/hostname: e/' "$1"`,
      () => n.run("edit"),
    );
    equal(r.code, 0, r.err);
    match(r.out, /patched config: applied with mode no-reboot on .*\nchanged: machine\.hostname/);
    equal(n.keeper.config?.machine.hostname, "e");
    ok(n.keeper.config?.machine.ca?.key.includes(KEY), "the key the editor saw redacted is kept");
    const shown = await Deno.readTextFile(seen);
    match(shown, /^# machinectl edit: the config in force on /);
    match(shown, /key: \(redacted\)/);
    ok(!shown.includes(KEY));

    r = await withEditor(n.f.pki.dir, "true", () => n.run("edit"));
    equal(r.code, 0, r.err);
    match(r.out, /no change; nothing was sent/);
    // Reformatting alone is no change either.
    r = await withEditor(n.f.pki.dir, `sed -i '1i # a comment' "$1"`, () => n.run("edit"));
    match(r.out, /no change; nothing was sent/);

    r = await withEditor(
      n.f.pki.dir,
      `sed -i 's/hostname: e/hostname: f/' "$1"`,
      () => n.run("edit", "--dry-run"),
    );
    equal(r.code, 0, r.err);
    match(r.out, /nothing changed \(dry run on /);
    match(r.out, /\+ {2}hostname: f\n/);
    equal(n.keeper.config?.machine.hostname, "e");
  } finally {
    await n.close();
  }
});

Deno.test("machinectl edit: a refused change reopens the editor with the reasons; quitting unchanged aborts", async () => {
  const n = await startConfigNode(IMAGE);
  try {
    const dir = n.f.pki.dir;
    const round = join(dir, "round");
    const second = join(dir, "second.yaml");
    // First round: an invalid hostname. Second: keep what was shown, fix it.
    const script = `if [ -e ${round} ]; then cp "$1" ${second}; ` +
      `sed -i 's/hostname: Not_Valid/hostname: g/' "$1"; ` +
      `else touch ${round}; sed -i 's/hostname: a/hostname: Not_Valid/' "$1"; fi`;
    let r = await withEditor(dir, script, () => n.run("edit"));
    equal(r.code, 0, r.err);
    equal(n.keeper.config?.machine.hostname, "g");
    const reopened = await Deno.readTextFile(second);
    match(reopened, /^#! machine\.hostname: /);
    ok(!reopened.includes(KEY));

    // Refused again, and the editor quits without touching the reopened file: abort.
    await Deno.remove(round);
    const giveUp = `if [ -e ${round} ]; then exit 0; fi; touch ${round}; ` +
      `sed -i 's/hostname: g/hostname: Not_Valid/' "$1"`;
    r = await withEditor(dir, giveUp, () => n.run("edit"));
    equal(r.code, 1);
    match(r.err, /edit aborted: the file was not changed after the refusal; nothing was changed/);
    equal(n.keeper.config?.machine.hostname, "g");
    ok(n.keeper.config?.machine.ca?.key.includes(KEY));
  } finally {
    await n.close();
  }
});
