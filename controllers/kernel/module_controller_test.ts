import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  KERNEL_MODULE_STATUS,
  type KernelModuleStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, FakeClock, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { EventBus } from "../../events/mod.ts";
import { FakeKmodBackend, type ModuleIndex, parseModulesDep } from "../../platform/kmod/mod.ts";
import { KEPT_LOADED, moduleController } from "./module_controller.ts";

const DIR = "/lib/modules/6.1.0-test";

/** A modules.dep fixture in depmod's format: br_netfilter needs bridge, which needs stp and llc. */
const MODULES_DEP =
  `kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz
kernel/net/bridge/bridge.ko.xz: kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz
kernel/net/802/stp.ko.xz: kernel/net/llc/llc.ko.xz
kernel/net/llc/llc.ko.xz:
kernel/net/netfilter/nf_conntrack.ko.xz: kernel/net/ipv4/netfilter/nf_defrag_ipv4.ko.xz
kernel/net/ipv4/netfilter/nf_defrag_ipv4.ko.xz:
kernel/drivers/block/loop.ko.xz:
`;

const index: ModuleIndex = {
  dir: DIR,
  dep: parseModulesDep(MODULES_DEP),
  builtin: new Set(["virtio_blk", "ext4"]),
};

/** A fake kernel with every module file of the fixture, each needing its dependencies loaded. */
function kernel(): FakeKmodBackend {
  const k = new FakeKmodBackend();
  for (const e of index.dep.values()) k.addModuleFile(`${DIR}/${e.path}`, e.deps);
  return k;
}

function setup(
  backend = kernel(),
  indexFn: () => Promise<ModuleIndex> = () => Promise.resolve(index),
) {
  const clock = new FakeClock();
  const store = new Store<ResourceSpecs>({ clock });
  const runtime = new ControllerRuntime(store, { clock });
  const events = new EventBus();
  runtime.register(moduleController({ backend, index: indexFn, events }));
  runtime.start();
  const setModules = (yaml: string) => {
    const r = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: n\n  kernel:\n    modules:${
        yaml ? "\n" + yaml : " []"
      }\n`,
      "t",
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
    return store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: r.config }),
    );
  };
  const status = (id: string, pred: (s: KernelModuleStatusSpec) => boolean = () => true) =>
    waitForResource(store, KERNEL_MODULE_STATUS, (r) => r.metadata.id === id && pred(r.spec));
  return { clock, store, runtime, events, backend, setModules, status };
}

Deno.test("dependencies load first; parameters go to the named module only", async () => {
  const t = setup();
  try {
    await t.setModules(
      "      - name: br_netfilter\n      - name: nf-conntrack\n        parameters: [hashsize=4096, expect_hashsize=64]",
    );
    const br = await t.status("br_netfilter");
    assert.deepEqual(br.spec, {
      name: "br_netfilter",
      state: "loaded",
      parameters: [],
      inForce: [],
      dependencies: ["llc", "stp", "bridge"],
      loadedDependencies: ["llc", "stp", "bridge"],
      configured: true,
      error: "",
      message: "",
    });
    const ct = await t.status("nf_conntrack");
    assert.equal(ct.spec.state, "loaded");
    assert.deepEqual(ct.spec.parameters, ["hashsize=4096", "expect_hashsize=64"]);
    assert.deepEqual(t.backend.loaded.get("nf_conntrack"), "hashsize=4096 expect_hashsize=64");
    assert.deepEqual(ct.spec.inForce, ["hashsize=4096", "expect_hashsize=64"]);
    assert.deepEqual([...t.backend.loaded.keys()], [
      "llc",
      "stp",
      "bridge",
      "br_netfilter",
      "nf_defrag_ipv4",
      "nf_conntrack",
    ]);
    assert.equal(t.backend.loaded.get("nf_conntrack"), "hashsize=4096 expect_hashsize=64");
    assert.equal(t.backend.loaded.get("nf_defrag_ipv4"), "");
    assert.deepEqual(t.backend.faults.callsOf("finit_module")[0], [
      `${DIR}/kernel/net/llc/llc.ko.xz`,
      "",
    ]);
    assert.equal(
      t.events.history().filter((e) => e.action === "module-loaded").length,
      2,
    );
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("built-in and already-loaded modules are recognised, with a note on parameters", async () => {
  const backend = kernel();
  await backend.loadModule(`${DIR}/kernel/drivers/block/loop.ko.xz`, "max_loop=8");
  await backend.loadModule(`${DIR}/kernel/net/llc/llc.ko.xz`);
  const t = setup(backend);
  try {
    await t.setModules(
      "      - name: virtio_blk\n        parameters: [queue_depth=64]\n" +
        "      - name: loop\n        parameters: [max_loop=64]\n      - name: stp",
    );
    const vb = await t.status("virtio_blk");
    assert.equal(vb.spec.state, "builtin");
    assert.match(vb.spec.message, /kernel command line/);
    const loop = await t.status("loop");
    assert.equal(loop.spec.state, "already-loaded");
    assert.match(loop.spec.message, /parameters not applied/);
    assert.equal(backend.loaded.get("loop"), "max_loop=8", "not reloaded");
    const stp = await t.status("stp");
    assert.equal(stp.spec.state, "loaded");
    assert.deepEqual(stp.spec.dependencies, ["llc"]);
    assert.deepEqual(stp.spec.loadedDependencies, [], "llc was already there");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("failures are reported with the cause and retried", async () => {
  const t = setup();
  try {
    t.backend.faults.failAlways(
      "finit_module",
      "EPERM",
      (args) => String(args[0]).endsWith("/loop.ko.xz"),
    );
    await t.setModules("      - name: loop\n      - name: no_such_module");
    const missing = await t.status("no_such_module");
    assert.equal(missing.spec.state, "failed");
    assert.match(missing.spec.error, /Cannot load module "no_such_module": .*not in modules\.dep/);
    const loop = await t.status("loop", (s) => s.state === "failed");
    assert.match(loop.spec.error, /EPERM/);
    assert.ok(t.events.history().some((e) => e.action === "module-failed"));

    await t.clock.waitForSleepers(1);
    t.backend.faults.clear();
    await t.clock.advance(60_000);
    await t.status("loop", (s) => s.state === "loaded" && s.error === "");
    assert.ok(t.backend.loaded.has("loop"));
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a module removed from the config stays loaded and says so; a failed one goes", async () => {
  const t = setup();
  try {
    await t.setModules("      - name: loop\n      - name: no_such_module");
    await t.status("loop", (s) => s.state === "loaded");
    await t.status("no_such_module", (s) => s.state === "failed");
    await t.setModules("");
    const kept = await t.status("loop", (s) => !s.configured);
    assert.equal(kept.spec.state, "loaded");
    assert.equal(kept.spec.message, KEPT_LOADED);
    assert.ok(t.backend.loaded.has("loop"), "never unloaded");
    await waitForAbsence(t.store, KERNEL_MODULE_STATUS, (r) => r.metadata.id === "no_such_module");

    await t.setModules("      - name: loop");
    await t.status("loop", (s) => s.configured && s.message === "");
    assert.equal(t.backend.faults.callsOf("finit_module").length, 1, "not loaded twice");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("changed parameters are not applied to a loaded module; an unloaded one is reloaded", async () => {
  const t = setup();
  try {
    await t.setModules("      - name: loop\n        parameters: [max_loop=8]");
    await t.status("loop", (s) => s.state === "loaded");
    await t.setModules("      - name: loop\n        parameters: [max_loop=64]");
    const changed = await t.status("loop", (s) => s.message !== "");
    assert.match(changed.spec.message, /parameters changed: not applied/);
    assert.deepEqual(changed.spec.parameters, ["max_loop=8"], "what it was loaded with");

    t.backend.loaded.delete("loop"); // rmmod behind machined's back
    await t.setModules("      - name: loop\n        parameters: [max_loop=32]");
    const again = await t.status("loop", (s) => s.parameters[0] === "max_loop=32");
    assert.equal(again.spec.message, "");
    assert.equal(t.backend.loaded.get("loop"), "max_loop=32");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a missing module index fails every module, and is read again on retry", async () => {
  let reads = 0;
  let present = false;
  const t = setup(kernel(), () => {
    reads++;
    return present
      ? Promise.resolve(index)
      : Promise.reject(new Deno.errors.NotFound(`${DIR}/modules.dep: no such file`));
  });
  try {
    await t.setModules("      - name: loop");
    const st = await t.status("loop", (s) => s.state === "failed");
    assert.match(st.spec.error, /modules\.dep: no such file/);
    await t.clock.waitForSleepers(1); // the retry timer
    present = true;
    await t.clock.advance(60_000);
    await t.status("loop", (s) => s.state === "loaded");
    const before = reads;
    await t.setModules("      - name: loop\n      - name: stp");
    await t.status("stp", (s) => s.state === "loaded");
    assert.equal(reads, before, "a good index is cached");
  } finally {
    await t.runtime.stop();
  }
});
