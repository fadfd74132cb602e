/**
 * The native kmod backend against the kernel. Nothing is staged for kexec
 * (only files that are not kernels are offered) and a module is loaded only
 * if a harmless one (`dummy`, `loop`) exists for the running kernel; needs root.
 * A parameter is checked in force with brd's `rd_nr=0` (no RAM disk made); dummy's
 * `numdummies` cannot be, since dummy declares it with mode 0 and sysfs never shows it.
 * A kernel without module support (this build host's) ignores the load, and
 * says so in the test's name; the QEMU tier loads real modules
 * (e2e/node_boot_test.ts, e2e/node_full_test.ts).
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeKmodBackend } from "./backend_native.ts";
import { kmodBackendConformance } from "./backend_conformance.ts";
import { loadModuleTree, readModuleIndex } from "./module_loader.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping native kmod tests: finit_module/kexec_file_load need root");
// /proc/modules exists only in a kernel built with module support (CONFIG_MODULES).
const moduleSupport = await Deno.stat("/proc/modules").then(() => true, () => false);
const moduleIndex = await readModuleIndex().catch((e) => {
  console.log(`no module tree for ${Deno.osRelease()}: ${e}`);
  return undefined;
});
const candidate = ["dummy", "loop"].find((m) =>
  moduleIndex?.dep.has(m) || moduleIndex?.builtin.has(m)
);
/** Why the module load cannot run here ("" when it can); part of the test's name. */
const loadSkip = !isRoot
  ? "needs root"
  : !moduleSupport
  ? "the kernel has no module support"
  : !moduleIndex
  ? `no module tree for ${Deno.osRelease()}`
  : !candidate
  ? "neither dummy nor loop exists"
  : "";

kmodBackendConformance("NativeKmodBackend (needs root)", () => new NativeKmodBackend(), {
  ignore: !isRoot,
});

Deno.test({
  name: "NativeKmodBackend: a file that is not a kernel or module is refused with a typed error " +
    "(needs root)",
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
  name: "NativeKmodBackend: load a harmless module with its dependencies" +
    (loadSkip ? ` (ignored: ${loadSkip}; the QEMU tier loads modules)` : ""),
  ignore: loadSkip !== "",
  fn: async () => {
    const index = moduleIndex!;
    const kmod = new NativeKmodBackend();
    const r = await loadModuleTree(kmod, index, candidate!);
    console.log(`loadModuleTree(${candidate}):`, r);
    const loaded = await kmod.loadedModules();
    assert.ok(loaded.has(candidate!) || index.builtin.has(candidate!));
    assert.equal(
      (await loadModuleTree(kmod, index, candidate!)).loaded.length,
      0,
      "second load must be a no-op",
    );
  },
});

// brd's rd_nr=0 makes no RAM disk: a parameter that changes nothing on the host, and one sysfs
// shows (module_param mode 0444). dummy's numdummies has mode 0, so it never appears under
// /sys/module/dummy/parameters, and the load test above may already have loaded dummy.
const brdLoaded = moduleSupport &&
  (await new NativeKmodBackend().loadedModules().catch(() => new Set<string>())).has("brd");
const paramSkip = !isRoot
  ? "needs root"
  : !moduleSupport
  ? "the kernel has no module support"
  : !moduleIndex?.dep.has("brd")
  ? `no brd module for ${Deno.osRelease()}`
  : brdLoaded
  ? "brd is already loaded, so a parameter cannot be given"
  : "";

Deno.test({
  name: "NativeKmodBackend: a module loaded with a parameter shows it in force" +
    (paramSkip ? ` (ignored: ${paramSkip}; the QEMU tier loads modules)` : ""),
  ignore: paramSkip !== "",
  fn: async () => {
    const kmod = new NativeKmodBackend();
    const r = await loadModuleTree(kmod, moduleIndex!, "brd", "rd_nr=0");
    assert.ok(r.loaded.includes("brd"), JSON.stringify(r));
    assert.deepEqual(await kmod.moduleParameters("brd", ["rd_nr"]), { rd_nr: "0" });
  },
});
