/**
 * `machinectl apply-config --mode/--timeout/--confirm` against machined's
 * real ConfigModes (over a ConfigKeeper with STATE in a temp dir), through
 * apid over mutual TLS, and `get machineconfig` showing what is pending.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../pki/mod.ts";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { createLogger } from "../logs/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { ConfigKeeper } from "../config/keeper/mod.ts";
import { ConfigModes } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;

async function setup() {
  const dir = await Deno.makeTempDir();
  const clock = new FakeClock();
  const m = new Machined({
    mode: "dev",
    pid1: false,
    clock,
    logger: createLogger({ console: false }),
  });
  m.start();
  const keeper = new ConfigKeeper(m);
  const reboots: string[] = [];
  const modes = new ConfigModes(keeper, {
    reboot: (by) => Promise.resolve(void reboots.push(by.name)),
  });
  await keeper.apply(cfg("a"), "image");
  await Deno.mkdir(join(dir, "state"));
  await keeper.stateMounted(join(dir, "state"));
  const f = await startApiFixture({ store: m.store, configApplier: modes });
  const config = await adminConfig(f, dir);
  const file = async (name: string, text: string) => {
    const p = join(dir, name);
    await Deno.writeTextFile(p, text);
    return p;
  };
  const run = async (...argv: string[]) => {
    const io = bufferIo();
    const code = await runMachinectl(["--config", config, ...argv], io);
    return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
  };
  return {
    m,
    keeper,
    clock,
    reboots,
    file,
    run,
    async close() {
      modes.dispose();
      await f.close();
      await m.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function adminConfig(f: ApiFixture, dir: string): Promise<string> {
  const path = join(dir, "client.yaml");
  const cert = f.pki.clients["os:admin"];
  const ctx = contextFromPem([f.endpoint], {
    caPem: f.pki.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
  });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  return path;
}

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
