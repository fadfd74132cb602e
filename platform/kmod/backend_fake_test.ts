import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeKmodBackend } from "./backend_fake.ts";
import { kmodBackendConformance } from "./backend_conformance.ts";
import { loadModuleTree, type ModuleIndex } from "./module_loader.ts";
import { parseModulesDep } from "./modules_dep.ts";

kmodBackendConformance("FakeKmodBackend", () => new FakeKmodBackend());

const DIR = "/lib/modules/6.18.0";
const index: ModuleIndex = {
  dir: DIR,
  dep: parseModulesDep(
    "kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko\n" +
      "kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko\n" +
      "kernel/net/core/failover.ko:\n" +
      "kernel/drivers/block/virtio_blk.ko:\n",
  ),
  builtin: new Set(["virtio_blk"]),
};

function fakeWithTree(): FakeKmodBackend {
  return new FakeKmodBackend()
    .addModuleFile(`${DIR}/kernel/net/core/failover.ko`)
    .addModuleFile(`${DIR}/kernel/drivers/net/net_failover.ko`, ["failover"])
    .addModuleFile(`${DIR}/kernel/drivers/net/virtio_net.ko`, ["net_failover", "failover"]);
}

Deno.test("loadModuleTree loads dependencies first; params go to the target only", async () => {
  const kmod = fakeWithTree();
  const r = await loadModuleTree(kmod, index, "virtio-net", "napi_tx=1");
  assert.deepEqual(r, { loaded: ["failover", "net_failover", "virtio_net"], skipped: [] });
  assert.equal(kmod.loaded.get("virtio_net"), "napi_tx=1");
  assert.equal(kmod.loaded.get("failover"), "");
});

Deno.test("loadModuleTree skips built-in and loaded modules; EEXIST is success", async () => {
  const kmod = fakeWithTree();
  await kmod.loadModule(`${DIR}/kernel/net/core/failover.ko`);
  const r = await loadModuleTree(kmod, index, "virtio_net");
  assert.deepEqual(r.skipped, [{ name: "failover", reason: "already-loaded" }]);
  assert.deepEqual(await loadModuleTree(kmod, index, "virtio_blk"), {
    loaded: [],
    skipped: [{ name: "virtio_blk", reason: "builtin" }],
  });
  assert.equal(await kmod.loadModule(`${DIR}/kernel/net/core/failover.ko`), "already-loaded");
});

Deno.test("fake kmod: a module loaded before its dependencies fails like the kernel", async () => {
  const kmod = fakeWithTree();
  await assert.rejects(
    kmod.loadModule(`${DIR}/kernel/drivers/net/virtio_net.ko`),
    (e) => isSysError(e, "ENOENT"),
  );
  kmod.faults.failNext("finit_module", "EPERM");
  await assert.rejects(loadModuleTree(kmod, index, "virtio_net"), (e) => isSysError(e, "EPERM"));
});

Deno.test("fake kmod: kexec staging", async () => {
  const kmod = new FakeKmodBackend().addFile("/boot/vmlinuz").addFile("/boot/initramfs");
  await kmod.kexecLoad({ kernel: "/boot/vmlinuz", initramfs: "/boot/initramfs", cmdline: "quiet" });
  assert.equal(kmod.staged?.cmdline, "quiet");
  await kmod.kexecUnload();
  assert.equal(kmod.staged, null);
});
