/**
 * `machinectl apply-config --dry-run` against machined's real ConfigModes
 * through apid: the diff, domains, hashes and verdict are printed, the exit
 * code is 0 whether or not the apply would change or be refused, nothing on
 * the node moves, and `get machineconfig` shows the hash the dry run compares.
 */
import { equal, match } from "node:assert/strict";
import { cfg, startConfigNode } from "./testing_config_node.ts";

const LISTEN = "  api:\n    listen: 0.0.0.0:50001\n";

Deno.test("machinectl apply-config --dry-run: diff, domains, hashes and verdict; exit 0; nothing changes", async () => {
  const n = await startConfigNode();
  try {
    const hostname = await n.file("b.yaml", cfg("b"));
    let r = await n.run("apply-config", "-f", hostname, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /b\.yaml: valid; would apply with mode no-reboot; nothing changed \(dry run on /);
    match(r.out, /\nchanged: machine\.hostname\n/);
    match(r.out, /\ndomains: network\n/);
    match(r.out, /\nsha256 in force: {2}[0-9a-f]{64}\nsha256 requested: [0-9a-f]{64}\n/);
    match(r.out, /\nverdict: would apply it live and persist it; no reboot\n/);
    match(r.out, /\n--- in force\n\+\+\+ requested\n@@ [^\n]+ @@\n/);
    match(r.out, /\n- {2}hostname: a\n\+ {2}hostname: b\n/);
    equal(n.keeper.config?.machine.hostname, "a");

    // The hash in force, as `get machineconfig` shows it.
    const inForce = r.out.match(/sha256 in force: {2}([0-9a-f]{64})/)![1];
    r = await n.run("get", "machineconfig");
    equal(r.code, 0, r.err);
    match(r.out, /SHA256/);
    match(r.out, new RegExp(`\\b${inForce.slice(0, 12)}\\b`));
    r = await n.run("get", "machineconfig", "-o", "yaml");
    match(r.out, new RegExp(`sha256: ${inForce}`));

    const listen = await n.file("listen.yaml", cfg("a", LISTEN));
    r = await n.run("apply-config", "-f", listen, "--dry-run", "--mode", "no-reboot");
    equal(r.code, 0, r.err);
    match(r.out, /listen\.yaml: valid; mode no-reboot would be refused; nothing changed/);
    match(r.out, /changed: machine\.api\.listen \(needs a reboot\)/);
    match(r.out, /verdict: refused: Cannot apply with mode no-reboot: machine\.api\.listen needs/);
    r = await n.run("apply-config", "-f", listen, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /verdict: would persist it and reboot the node/);
    equal(n.reboots.length, 0);

    const same = await n.file("same.yaml", `# the same, spelled otherwise\n${cfg("'a'")}`);
    r = await n.run("apply-config", "-f", same, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /changed: nothing\ndomains: none\n/);
    match(r.out, /verdict: nothing to apply: the config in force is the same$/);
    const hashes = [...r.out.matchAll(/sha256 (?:in force: |requested:) ([0-9a-f]{64})/g)];
    equal(hashes[0][1], hashes[1][1]);
    equal(hashes[0][1], inForce);
    // A mode that reboots still would, even with nothing to change.
    r = await n.run("apply-config", "-f", same, "--dry-run", "--mode", "reboot");
    match(
      r.out,
      /verdict: would persist it and reboot the node \(the config in force is the same\)/,
    );

    r = await n.runAs("os:operator", "apply-config", "-f", hostname, "--dry-run");
    equal(r.code, 1);
    match(r.err, /permission denied: .*ApplyConfiguration.*needs "os:admin"/);
    equal(n.keeper.config?.machine.hostname, "a");
    equal(n.reboots.length, 0);
  } finally {
    await n.close();
  }
});
