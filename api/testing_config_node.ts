/**
 * A node for tests of ApplyConfiguration through the API: machined's real
 * ConfigModes over a ConfigKeeper (booted with `image`, STATE in a temp dir)
 * behind apid over mutual TLS, reboots recorded instead of done. The keeper's
 * dry-run and patch tests and machinectl's apply-config tests build on it.
 * Not for production.
 * @module
 */
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { createLogger } from "../logs/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { ConfigKeeper, ConfigModes } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { startApiFixture } from "./testing.ts";

/** Starts the node booted with `image`; `close()` stops it and removes its files. */
export async function startKeeperNode(image: string) {
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
  /** How the keeper took the image (tests that need a valid one assert it). */
  const imageState = (await keeper.apply(image, "image")).state;
  const stateDir = join(dir, "state");
  await Deno.mkdir(stateDir);
  await keeper.stateMounted(stateDir);
  const f = await startApiFixture({ store: m.store, configApplier: modes });
  /** What a refused or dry-run call must not move. */
  const snapshot = async () => ({
    text: keeper.text,
    onState: await Deno.readTextFile(join(stateDir, "config.yaml")),
    resource: m.store.get("MachineConfig", "config", "v1alpha1").spec,
    events: m.events.history().filter((e) => e.kind === "config").length,
    reboots: reboots.length,
  });
  return {
    m,
    f,
    keeper,
    clock,
    reboots,
    imageState,
    snapshot,
    /** The node's files (STATE is `state/` under it). */
    dir,
    stateDir,
    async close() {
      modes.dispose();
      await f.close();
      await m.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The ConnectError `call` is refused with. @throws Error when it is not refused. */
export async function rejection(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}
