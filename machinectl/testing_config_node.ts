/**
 * A node for machinectl tests of apply-config: machined's real ConfigModes
 * over a ConfigKeeper (booted with `cfg("a")`, STATE in a temp dir) behind
 * apid over mutual TLS, and `run` to call machinectl as its admin. Not for
 * production.
 */
import { join } from "node:path";
import {
  addContext,
  contextFromPem,
  emptyClientConfig,
  type Role,
  writeClientConfig,
} from "../pki/mod.ts";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { createLogger } from "../logs/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { ConfigKeeper, ConfigModes } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

/** A config text with `hostname`, plus `extra` YAML under `machine:`. */
export const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;

/** Starts the node; `close()` stops it and removes its files. */
export async function startConfigNode() {
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
  const config = await clientConfig(f, dir, "os:admin");
  const file = async (name: string, text: string) => {
    const p = join(dir, name);
    await Deno.writeTextFile(p, text);
    return p;
  };
  const runWith = async (path: string, argv: string[]) => {
    const io = bufferIo();
    const code = await runMachinectl(["--config", path, ...argv], io);
    return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
  };
  /** machinectl as the admin. */
  const run = (...argv: string[]) => runWith(config, argv);
  /** machinectl with a certificate of `role`. */
  const runAs = async (role: Role, ...argv: string[]) =>
    runWith(await clientConfig(f, dir, role), argv);
  return {
    m,
    f,
    keeper,
    clock,
    reboots,
    file,
    run,
    runAs,
    async close() {
      modes.dispose();
      await f.close();
      await m.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function clientConfig(f: ApiFixture, dir: string, role: Role): Promise<string> {
  const path = join(dir, `client-${role.slice(3)}.yaml`);
  const cert = f.pki.clients[role];
  const ctx = contextFromPem([f.endpoint], {
    caPem: f.pki.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
  });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  return path;
}
