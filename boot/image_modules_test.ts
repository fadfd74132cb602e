import assert from "node:assert/strict";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { FakeKmodBackend, type ModuleLoadResult } from "../platform/kmod/mod.ts";
import { FakeClock } from "../runtime/mod.ts";
import { startImageModules } from "./image_modules.ts";

async function listFile(lines: string[]): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".modules" });
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

function deps(kmod: Pick<FakeKmodBackend, "loadModule">, listPath: string) {
  const logger = createLogger({ console: false });
  return { kmod, listPath, events: new EventBus(), logger };
}

Deno.test("the image's modules load in the list's order, with their parameters, as events", async () => {
  const kmod = new FakeKmodBackend()
    .addModuleFile("/lib/modules/crc32c.ko")
    .addModuleFile("/lib/modules/bonding.ko", ["crc32c"]);
  const path = await listFile([
    "# dependencies first",
    "/lib/modules/crc32c.ko",
    "/lib/modules/bonding.ko max_bonds=0",
  ]);
  const d = deps(kmod, path);
  await startImageModules(d);
  assert.deepEqual([...kmod.loaded], [["crc32c", ""], ["bonding", "max_bonds=0"]]);
  const seen = d.events.history().map((e) => `${e.subject}:${e.action}`);
  assert.deepEqual(seen.filter((s) => s.startsWith("imageModules")), [
    "imageModules:started",
    "imageModules:done",
  ]);
  assert.match(
    d.logger.ring.tail().map((l) => l.text).join("\n"),
    /image modules loaded.*listed=2.*loaded=2/,
  );
  await Deno.remove(path);
});

Deno.test("startImageModules returns before the load ends, so boot's other work goes on", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const calls: string[] = [];
  const kmod = {
    loadModule: async (p: string): Promise<ModuleLoadResult> => {
      calls.push(p);
      await gate;
      return "loaded";
    },
  };
  const path = await listFile(["/m/a.ko", "/m/b.ko"]);
  let settled = false;
  const loading = startImageModules(deps(kmod, path)).then(() => (settled = true));
  for (let i = 0; i < 20 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(calls, ["/m/a.ko"]);
  assert.equal(settled, false, "the first module is still loading");
  release();
  await loading;
  assert.deepEqual(calls, ["/m/a.ko", "/m/b.ko"]);
  await Deno.remove(path);
});

Deno.test("a module that fails is reported and the rest still load", async () => {
  const kmod = new FakeKmodBackend().addModuleFile("/m/good.ko");
  const path = await listFile(["/m/missing.ko", "/m/good.ko"]);
  const d = deps(kmod, path);
  await startImageModules(d);
  assert.deepEqual([...kmod.loaded.keys()], ["good"]);
  const text = d.logger.ring.tail().map((l) => l.text).join("\n");
  assert.match(text, /module \/m\/missing\.ko failed to load/);
  assert.match(text, /listed=2.*loaded=1/);
  await Deno.remove(path);
});

Deno.test("a hung module overruns the deadline: the promise still resolves, with an overran event", async () => {
  const kmod = { loadModule: () => new Promise<ModuleLoadResult>(() => {}) };
  const path = await listFile(["/m/hangs.ko"]);
  const clock = new FakeClock();
  const d = { ...deps(kmod, path), clock, deadlineMs: 1_000 };
  let settled = false;
  const loading = startImageModules(d).then(() => (settled = true));
  for (let i = 0; i < 50 && clock.pendingSleeps === 0; i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  await clock.advance(999);
  assert.equal(settled, false);
  await clock.advance(1);
  await loading;
  const actions = d.events.history().filter((e) => e.subject === "imageModules").map((e) =>
    e.action
  );
  assert.ok(actions.includes("overran"), actions.join(","));
  await Deno.remove(path);
});

Deno.test("no list in the image: nothing is loaded and nothing fails", async () => {
  const kmod = new FakeKmodBackend();
  const d = deps(kmod, "/nonexistent/etc/machined/modules");
  await startImageModules(d);
  assert.equal(kmod.loaded.size, 0);
  assert.ok(d.events.history().some((e) => e.subject === "imageModules" && e.action === "done"));
});
