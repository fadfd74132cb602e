import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../../logs/mod.ts";
import { FakeClock } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { ApplyRefusedError } from "../../api/server/mod.ts";
import type { ActionRequester } from "../../api/server/mod.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { ConfigModes } from "./config_modes.ts";
import { Machined } from "../../core/mod.ts";

const BY = { name: "test", role: "os:admin" };
const cfg = (hostname: string, extra = "") =>
  `version: v1alpha1\nmachine:\n  hostname: ${hostname}\n${extra}`;
const LISTEN = "  api:\n    listen: 0.0.0.0:50001\n";

interface Node {
  m: Machined;
  keeper: ConfigKeeper;
  modes: ConfigModes;
  clock: FakeClock;
  reboots: ActionRequester[];
  stateDir: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A node booted with `image`, with STATE mounted at `stateDir` (unless `state: false`). */
async function boot(image: string, o: { stateDir?: string; state?: boolean } = {}): Promise<Node> {
  const clock = new FakeClock();
  const m = new Machined({
    mode: "dev",
    pid1: false,
    clock,
    logger: createLogger({ console: false }),
  });
  m.start();
  const keeper = new ConfigKeeper(m);
  const reboots: ActionRequester[] = [];
  const modes = new ConfigModes(keeper, {
    reboot: (by) => {
      reboots.push(by);
      return Promise.resolve();
    },
  });
  assert.equal((await keeper.apply(image, "image")).state, "valid");
  const stateDir = o.stateDir ?? await Deno.makeTempDir();
  if (o.state !== false) await keeper.stateMounted(stateDir);
  return {
    m,
    keeper,
    modes,
    clock,
    reboots,
    stateDir,
    async [Symbol.asyncDispose]() {
      modes.dispose();
      await m.stop();
      // A dir the caller passed is shared with a later boot; the temp dir is left to the OS then.
      if (o.stateDir === undefined) await Deno.remove(stateDir, { recursive: true });
    },
  };
}

const onState = (n: Node) => Deno.readTextFile(join(n.stateDir, "config.yaml"));
const machineConfig = (n: Node) => n.m.store.get("MachineConfig", "config", "v1alpha1").spec;

Deno.test("no-reboot applies live and persists; the reply names the mode and the changes", async () => {
  await using n = await boot(cfg("a"));
  const { current, requested, ...r } = await n.modes.apply(cfg("b"), {
    dryRun: false,
    by: BY,
    mode: "no-reboot",
  });
  assert.deepEqual(r, {
    state: "valid",
    errors: [],
    mode: "no-reboot",
    changed: ["machine.hostname"],
    rebootFields: [],
  });
  assert.deepEqual([current?.machine.hostname, requested?.machine.hostname], ["a", "b"]);
  assert.equal(n.keeper.config?.machine.hostname, "b");
  assert.equal(await onState(n), cfg("b"));
  assert.equal(machineConfig(n).pending, undefined);
  assert.ok(n.m.events.history().some((e) => /applied \(no-reboot\)/.test(e.message)));
});

Deno.test("no-reboot is refused with the reboot-only fields; nothing changes", async () => {
  await using n = await boot(cfg("a"));
  const err = await n.modes.apply(cfg("b", LISTEN), { dryRun: false, by: BY, mode: "no-reboot" })
    .then(() => undefined, (e) => e);
  assert.ok(err instanceof ApplyRefusedError, String(err));
  assert.deepEqual(err.rebootFields, ["machine.api.listen"]);
  assert.deepEqual(err.changed, ["machine.api.listen", "machine.hostname"]);
  assert.match(err.message, /machine\.api\.listen needs a reboot \(apid binds/);
  assert.equal(n.keeper.text, cfg("a"));
  assert.equal(await onState(n), cfg("a"));
});

Deno.test("auto: no-reboot when every change is live, else reboot (persisted, then rebooted)", async () => {
  await using n = await boot(cfg("a"));
  let r = await n.modes.apply(cfg("b"), { dryRun: false, by: BY });
  assert.equal(r.mode, "no-reboot");
  assert.equal(n.reboots.length, 0);
  r = await n.modes.apply(cfg("c", LISTEN), { dryRun: false, by: BY, mode: "auto" });
  assert.equal(r.mode, "reboot");
  assert.deepEqual(r.rebootFields, ["machine.api.listen"]);
  assert.deepEqual(n.reboots, [BY]);
  assert.equal(n.keeper.config?.machine.hostname, "b", "reboot mode does not apply live");
  assert.equal(await onState(n), cfg("c", LISTEN));
});

Deno.test("staged persists for the next boot only; pending shows it; the next boot runs it", async () => {
  const stateDir = await Deno.makeTempDir();
  {
    await using n = await boot(cfg("a"), { stateDir });
    const r = await n.modes.apply(cfg("b", LISTEN), { dryRun: false, by: BY, mode: "staged" });
    assert.equal(r.mode, "staged");
    assert.equal(n.keeper.config?.machine.hostname, "a");
    assert.equal(n.reboots.length, 0);
    assert.deepEqual(machineConfig(n).pending, {
      mode: "staged",
      changed: ["machine.api.listen", "machine.hostname"],
    });
  }
  await using next = await boot(cfg("a"), { stateDir });
  assert.equal(next.keeper.config?.machine.hostname, "b");
  assert.equal(next.keeper.config?.machine.api.listen, "0.0.0.0:50001");
  assert.equal(machineConfig(next).pending, undefined);
});

Deno.test("try applies in memory only and reverts at the deadline on the runtime's clock", async () => {
  await using n = await boot(cfg("a"));
  const r = await n.modes.apply(cfg("b"), {
    dryRun: false,
    by: BY,
    mode: "try",
    tryTimeoutMs: 30_000,
  });
  assert.equal(r.mode, "try");
  assert.equal(n.keeper.config?.machine.hostname, "b");
  assert.equal(await onState(n), cfg("a"), "a try is never persisted");
  assert.deepEqual(machineConfig(n).pending, {
    mode: "try",
    changed: ["machine.hostname"],
    deadline: new Date(n.clock.now() + 30_000).toISOString(),
  });
  await n.clock.advance(29_999);
  assert.equal(n.keeper.config?.machine.hostname, "b");
  const reverted = waitForResource(
    n.m.store,
    "MachineConfig",
    (x) => x.spec.config.machine.hostname === "a" && !x.spec.pending,
  );
  await n.clock.advance(1);
  await reverted;
  assert.equal(n.keeper.text, cfg("a"));
  assert.ok(n.m.events.history().some((e) => e.action === "reverted"));
});

Deno.test("a confirmed try is persisted and stays past its deadline", async () => {
  await using n = await boot(cfg("a"));
  await n.modes.apply(cfg("b"), { dryRun: false, by: BY, mode: "try" });
  assert.deepEqual(n.clock.pendingDelays().includes(60_000), true, "default timeout 1m");
  const r = await n.modes.confirm(BY);
  assert.deepEqual([r.mode, r.changed], ["try", ["machine.hostname"]]);
  assert.equal(await onState(n), cfg("b"));
  await n.clock.advance(120_000);
  assert.equal(n.keeper.config?.machine.hostname, "b");
  assert.equal(machineConfig(n).pending, undefined);
  await assert.rejects(n.modes.confirm(BY), ApplyRefusedError, "nothing left to confirm");
});

Deno.test("applying again with another mode confirms a try (its timer is cancelled)", async () => {
  await using n = await boot(cfg("a"));
  await n.modes.apply(cfg("b"), { dryRun: false, by: BY, mode: "try" });
  await n.modes.apply(cfg("c"), { dryRun: false, by: BY, mode: "no-reboot" });
  await n.clock.advance(120_000);
  assert.equal(n.keeper.config?.machine.hostname, "c");
  assert.equal(await onState(n), cfg("c"));
});

Deno.test("a reboot during a try boots the persisted config", async () => {
  const stateDir = await Deno.makeTempDir();
  {
    await using n = await boot(cfg("a"), { stateDir });
    await n.modes.apply(cfg("p"), { dryRun: false, by: BY, mode: "no-reboot" });
    await n.modes.apply(cfg("t"), { dryRun: false, by: BY, mode: "try" });
    assert.equal(n.keeper.config?.machine.hostname, "t");
  }
  await using next = await boot(cfg("a"), { stateDir });
  assert.equal(next.keeper.config?.machine.hostname, "p");
  assert.equal(machineConfig(next).pending, undefined);
});

Deno.test("a try over a staged config reverts to what ran; the staged one stays pending", async () => {
  await using n = await boot(cfg("a"));
  await n.modes.apply(cfg("s", LISTEN), { dryRun: false, by: BY, mode: "staged" });
  await n.modes.apply(cfg("t"), { dryRun: false, by: BY, mode: "try", tryTimeoutMs: 5_000 });
  assert.equal(machineConfig(n).pending?.mode, "try");
  const back = waitForResource(
    n.m.store,
    "MachineConfig",
    (x) => x.spec.config.machine.hostname === "a" && x.spec.pending?.mode === "staged",
  );
  await n.clock.advance(5_000);
  await back;
  assert.equal(await onState(n), cfg("s", LISTEN));
});

Deno.test("refusals: try with a reboot-only field, staged/reboot without STATE, bad timeouts", async () => {
  await using n = await boot(cfg("a"), { state: false });
  const refused = (text: string, mode: "try" | "staged" | "reboot") =>
    assert.rejects(n.modes.apply(text, { dryRun: false, by: BY, mode }), ApplyRefusedError, mode);
  await refused(cfg("b", LISTEN), "try");
  await refused(cfg("b"), "staged");
  await refused(cfg("b"), "reboot");
  for (const tryTimeoutMs of [10, 90_000_000]) {
    await assert.rejects(
      n.modes.apply(cfg("b"), { dryRun: false, by: BY, mode: "try", tryTimeoutMs }),
      RangeError,
    );
  }
  assert.equal(n.keeper.text, cfg("a"));
  assert.equal(n.reboots.length, 0);
});

Deno.test("a dry run reports the mode auto would pick and changes nothing", async () => {
  await using n = await boot(cfg("a"));
  const r = await n.modes.apply(cfg("b", LISTEN), { dryRun: true, by: BY });
  assert.deepEqual([r.mode, r.rebootFields], ["reboot", ["machine.api.listen"]]);
  assert.equal(n.reboots.length, 0);
  assert.equal(n.keeper.text, cfg("a"));
  assert.equal(await onState(n), cfg("a"));
});

Deno.test("an invalid config is refused in every mode with its errors", async () => {
  await using n = await boot(cfg("a"));
  for (const mode of ["auto", "no-reboot", "reboot", "staged", "try"] as const) {
    const r = await n.modes.apply(cfg("a", "  nope: 1\n"), { dryRun: false, by: BY, mode });
    assert.equal(r.state, "invalid", mode);
    assert.ok(r.errors.length > 0);
  }
  assert.equal(n.reboots.length, 0);
});

Deno.test("a try applied again replaces the first (new deadline) and keeps its revert point", async () => {
  await using n = await boot(cfg("a"));
  await n.modes.apply(cfg("b"), { dryRun: false, by: BY, mode: "try", tryTimeoutMs: 10_000 });
  await n.clock.advance(5_000);
  await n.modes.apply(cfg("c"), { dryRun: false, by: BY, mode: "try", tryTimeoutMs: 10_000 });
  await n.clock.advance(6_000);
  assert.equal(n.keeper.config?.machine.hostname, "c", "the first deadline no longer counts");
  const back = waitForResource(
    n.m.store,
    "MachineConfig",
    (x) => x.spec.config.machine.hostname === "a" && !x.spec.pending,
  );
  await n.clock.advance(4_000);
  await back;
});
