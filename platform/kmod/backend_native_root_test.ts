/**
 * The native kmod backend against the kernel. Nothing is staged for kexec
 * (only files that are not kernels are offered) and a module is loaded only
 * if a harmless one (`dummy`, `loop`) exists for the running kernel; needs root.
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeKmodBackend } from "./backend_native.ts";
import { kmodBackendConformance } from "./backend_conformance.ts";
import { loadModuleTree, readModuleIndex } from "./module_loader.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping native kmod tests: finit_module/kexec_file_load need root");

kmodBackendConformance("NativeKmodBackend", () => new NativeKmodBackend(), { ignore: !isRoot });

Deno.test({
  name: "NativeKmodBackend: a file that is not a kernel or module is refused with a typed error",
  ignore: !isRoot,
  fn: async () => {
    const kmod = new NativeKmodBackend();
    const notAKernel = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(notAKernel, "definitely not a bzImage\n".repeat(100));
      await assert.rejects(kmod.kexecLoad({ kernel: notAKernel, cmdline: "" }), (e) => {
        assert.ok(isSysError(e), String(e));
        assert.equal(e.op, "kexec_file_load");
        console.log(`kexec_file_load of a non-kernel: ${e.code}`);
        return true;
      });
      await assert.rejects(kmod.loadModule(notAKernel, "x=1"), (e) => {
        assert.ok(isSysError(e), String(e));
        assert.equal(e.op, "finit_module");
        console.log(`finit_module of a non-module: ${e.code}`);
        return true;
      });
    } finally {
      await kmod.kexecUnload().catch(() => {});
      await Deno.remove(notAKernel);
    }
  },
});

Deno.test({
  name: "NativeKmodBackend: load a harmless module with its dependencies",
  ignore: !isRoot,
  fn: async () => {
    let index;
    try {
      index = await readModuleIndex();
    } catch (e) {
      return console.log(`skipping module load: no module tree for ${Deno.osRelease()} (${e})`);
    }
    const candidate = ["dummy", "loop"].find((m) => index.dep.has(m) || index.builtin.has(m));
    if (!candidate) return console.log("skipping module load: neither dummy nor loop exists");
    const kmod = new NativeKmodBackend();
    const r = await loadModuleTree(kmod, index, candidate);
    console.log(`loadModuleTree(${candidate}):`, r);
    const loaded = await kmod.loadedModules();
    assert.ok(loaded.has(candidate) || index.builtin.has(candidate));
    assert.equal(
      (await loadModuleTree(kmod, index, candidate)).loaded.length,
      0,
      "second load must be a no-op",
    );
  },
});
