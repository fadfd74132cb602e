/**
 * A node for machinectl tests of apply-config: machined's real ConfigModes
 * over a ConfigKeeper (booted with `cfg("a")`, STATE in a temp dir) behind
 * apid over mutual TLS, and `run` to call machinectl as its admin. Not for
 * production.
 */
import { join } from "node:path";
import type { Role } from "../pki/mod.ts";
import { startApiFixture } from "../api/testing.ts";
import { createLogger } from "../logs/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { ConfigKeeper, ConfigModes } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { clientConfig, runCli } from "./testing.ts";

/** A config text with `hostname`, plus `extra` YAML under `machine:`. */
export const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;

/** Starts the node booted with `image`; `close()` stops it and removes its files. */
export async function startConfigNode(image = cfg("a")) {
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
  await keeper.apply(image, "image");
  await Deno.mkdir(join(dir, "state"));
  await keeper.stateMounted(join(dir, "state"));
  const f = await startApiFixture({ store: m.store, configApplier: modes });
  const config = await clientConfig(f, "os:admin");
  const file = async (name: string, text: string) => {
    const p = join(dir, name);
    await Deno.writeTextFile(p, text);
    return p;
  };
  /** machinectl as the admin. */
  const run = (...argv: string[]) => runCli(config, ...argv);
  /** machinectl with a certificate of `role`. */
  const runAs = async (role: Role, ...argv: string[]) =>
    runCli(await clientConfig(f, role), ...argv);
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
