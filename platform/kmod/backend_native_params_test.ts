/**
 * NativeKmodBackend.moduleParameters without root: over a /sys/module laid out in a temporary
 * directory, and over the host's own /sys/module for a built-in module's parameter.
 */
import assert from "node:assert/strict";
import type { KexecImage, ModuleLoadResult } from "./backend.ts";
import { NativeKmodBackend } from "./backend_native.ts";

/** No native call is made by moduleParameters. */
const NO_NATIVE = {
  loadModule: (_p: string, _q: string): Promise<ModuleLoadResult> => Promise.reject(new Error()),
  kexecLoad: (_k: KexecImage["kernel"]): Promise<void> => Promise.reject(new Error()),
  kexecUnload: (): Promise<void> => Promise.reject(new Error()),
};

Deno.test("moduleParameters: shown values without the newline; unknown, unreadable and unsafe keys left out", async () => {
  const sys = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${sys}/loop/parameters`, { recursive: true });
    await Deno.writeTextFile(`${sys}/loop/parameters/max_loop`, "8\n");
    await Deno.writeTextFile(`${sys}/loop/parameters/max_part`, "0\n");
    const kmod = new NativeKmodBackend(NO_NATIVE, "/nonexistent/modules", sys);
    assert.deepEqual(
      await kmod.moduleParameters("loop", ["max_loop", "nope", "../loop/parameters/max_part"]),
      { max_loop: "8" },
    );
    assert.deepEqual(await kmod.moduleParameters("absent", ["max_loop"]), {});
  } finally {
    await Deno.remove(sys, { recursive: true });
  }
});

const printk = await Deno.stat("/sys/module/printk/parameters/time").then(() => true, () => false);

Deno.test({
  name: "moduleParameters: a built-in module's parameter from the host's /sys/module" +
    (printk ? "" : " (needs /sys/module/printk/parameters/time)"),
  ignore: !printk,
  fn: async () => {
    const shown = await new NativeKmodBackend(NO_NATIVE).moduleParameters("printk", ["time"]);
    assert.match(shown.time, /^[YN]$/);
  },
});
