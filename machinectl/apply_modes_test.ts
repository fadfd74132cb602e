/**
 * `machinectl apply-config --mode/--timeout/--confirm` against machined's
 * real ConfigModes (over a ConfigKeeper with STATE in a temp dir), through
 * apid over mutual TLS, and `get machineconfig` showing what is pending.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";
import { cfg, startConfigNode as setup } from "./testing_config_node.ts";

Deno.test("machinectl apply-config modes: no-reboot refused with the fields, try, confirm, staged, auto", async () => {
  const n = await setup();
  try {
    const listen = await n.file("listen.yaml", cfg("b", "  api:\n    listen: 0.0.0.0:50001\n"));
    let r = await n.run("apply-config", "-f", listen, "--mode", "no-reboot");
    equal(r.code, 1, r.out);
    match(r.err, /Cannot apply with mode no-reboot: machine\.api\.listen needs a reboot/);
    match(r.err, /listen\.yaml: needs a reboot: machine\.api\.listen/);
    equal(n.keeper.config?.machine.hostname, "a");

    const b = await n.file("b.yaml", cfg("b"));
    r = await n.run("apply-config", "-f", b, "--mode", "try", "--timeout", "2m");
    equal(r.code, 0, r.err);
    match(r.out, /applied with mode try on/);
    match(r.out, /changed: machine\.hostname/);
    r = await n.run("get", "machineconfig");
    equal(r.code, 0, r.err);
    match(r.out, new RegExp(`try until ${new Date(n.clock.now() + 120_000).toISOString()}`));
    r = await n.run("apply-config", "--confirm");
    equal(r.code, 0, r.err);
    match(r.out, /confirmed and persisted/);
    r = await n.run("apply-config", "--confirm");
    equal(r.code, 1);
    match(r.err, /No try config is pending/);

    r = await n.run("apply-config", "-f", listen, "--mode", "staged");
    equal(r.code, 0, r.err);
    match(r.out, /changed: machine\.api\.listen \(needs a reboot\)/);
    r = await n.run("get", "machineconfig", "-o", "json");
    deepEqual(JSON.parse(r.out).spec.pending, { mode: "staged", changed: ["machine.api.listen"] });

    r = await n.run("apply-config", "-f", listen);
    equal(r.code, 0, r.err);
    match(r.out, /applied with mode reboot/);
    deepEqual(n.reboots, ["admin"]);
  } finally {
    await n.close();
  }
});

Deno.test("machinectl apply-config: bad mode, --timeout without try, --confirm with a file: exit 2", async () => {
  const io = bufferIo();
  equal(await runMachinectl(["apply-config", "-f", "x.yaml", "--mode", "later"], io), 2);
  match(io.stderr.join("\n"), /unknown mode "later"/);
  equal(await runMachinectl(["apply-config", "-f", "x.yaml", "--timeout", "1m"], io), 2);
  match(io.stderr.join("\n"), /--timeout is for --mode try only/);
  equal(await runMachinectl(["apply-config", "--confirm", "-f", "x.yaml"], io), 2);
  match(io.stderr.join("\n"), /--confirm takes no file/);
});
