import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../logs/mod.ts";
import { ConfigKeeper } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { reloadConfigFile, watchConfigFile } from "./config_watch.ts";

const GOOD = "version: v1alpha1\nmachine:\n  hostname: node-1\n";
const CYCLE = "version: v1alpha1\nmachine:\n  hostname: node-2\n  sysctls: &r\n    a: *r\n";

async function setup() {
  const dir = await Deno.makeTempDir();
  const path = join(await Deno.realPath(dir), "config.yaml");
  await Deno.writeTextFile(path, GOOD);
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  m.start();
  const keeper = new ConfigKeeper(m);
  assert.equal((await keeper.apply(GOOD, path)).state, "valid");
  return { dir, path, m, keeper };
}

Deno.test("an edit the watcher reloads that is invalid shows in ConfigStatus; the config stays", async () => {
  const { dir, path, m, keeper } = await setup();
  const failures: unknown[] = [];
  const reloaded = Promise.withResolvers<void>();
  const onChange = async () => {
    await reloadConfigFile(keeper, path);
    reloaded.resolve();
  };
  const stop = watchConfigFile(path, onChange, 20, (e) => failures.push(e));
  try {
    await Deno.writeTextFile(path, CYCLE);
    const cs = await waitForResource(m.store, "ConfigStatus", (r) => r.spec.state === "invalid");
    await reloaded.promise;
    assert.deepEqual(cs.spec.errors.map((e) => [e.path, e.line, e.column]), [[
      "machine.sysctls.a",
      5,
      8,
    ]]);
    assert.match(cs.spec.errors[0].message, /cycle/);
    assert.equal(
      m.store.get("MachineConfig", "config", "v1alpha1").spec.config.machine.hostname,
      "node-1",
    );
    const logged = m.logger.ring.tail().map((l) => l.text).join("\n");
    assert.match(logged, /reloaded .*config\.yaml: invalid; keeping the config in force/);
    assert.match(logged, /config\.yaml:5:8: machine\.sysctls\.a: alias refers/);
    assert.deepEqual(failures, []);
  } finally {
    stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config file that cannot be read is logged and changes nothing", async () => {
  const { dir, path, m, keeper } = await setup();
  try {
    await Deno.remove(path);
    assert.equal(await reloadConfigFile(keeper, path), undefined);
    assert.match(
      m.logger.ring.tail(1)[0].text,
      /cannot read .*config\.yaml; keeping the config in force/,
    );
    assert.equal(m.store.get("ConfigStatus", "config", "machine").spec.state, "valid");
  } finally {
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failing reload callback is reported, not swallowed", async () => {
  const { dir, path, m } = await setup();
  const { promise, resolve } = Promise.withResolvers<unknown>();
  const stop = watchConfigFile(path, () => Promise.reject(new Error("boom")), 20, resolve);
  try {
    await Deno.writeTextFile(path, GOOD + "# edit\n");
    assert.match(String(await promise), /boom/);
  } finally {
    stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
