/**
 * One suite both kmod backends pass without changing the kernel: failures
 * are typed SysErrors, and the loaded set can be read.
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { KmodBackend } from "./backend.ts";

/** Register the suite's tests under `name`. */
export function kmodBackendConformance(
  name: string,
  make: () => KmodBackend,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (b: KmodBackend) => Promise<void>) =>
    Deno.test({ name: `${name}: ${title}`, ignore: options.ignore, fn: () => fn(make()) });

  test("loading a missing module file is a typed ENOENT", async (b) => {
    await assert.rejects(
      b.loadModule("/nonexistent/dummy.ko", ""),
      (e) => isSysError(e, "ENOENT") && e.op === "finit_module",
    );
  });

  test("staging a missing kernel is a typed ENOENT", async (b) => {
    await assert.rejects(
      b.kexecLoad({ kernel: "/nonexistent/vmlinuz", cmdline: "console=ttyS0" }),
      (e) => isSysError(e, "ENOENT") && e.op === "kexec_file_load",
    );
  });

  test("the loaded set can be read", async (b) => {
    assert.ok((await b.loadedModules()) instanceof Set);
  });

  test("a module that is not there shows no parameters, and never throws", async (b) => {
    assert.deepEqual(await b.moduleParameters("machined_no_such_module", ["a", "b"]), {});
  });
}
