/**
 * reboot(2) for real, safely: each case runs power_in_pidns.ts as PID 1 of a
 * throwaway PID namespace, where the kernel answers restart with SIGHUP and
 * power-off with SIGINT to that namespace's init (and Ctrl-Alt-Del or kexec
 * with EINVAL) instead of touching the machine. Needs root; ignored otherwise.
 */
import assert from "node:assert/strict";
import { rerunInNamespace } from "../testing.ts";
import { NativePowerBackend } from "./backend_native.ts";
import { powerBackendConformance } from "./backend_conformance.ts";

const isRoot = Deno.uid() === 0;
if (!isRoot) console.log("skipping native power tests: reboot(2) needs root");

powerBackendConformance("NativePowerBackend (needs root)", () => new NativePowerBackend(), {
  ignore: !isRoot,
});

for (const [cmd, signal] of [["restart", "SIGHUP"], ["poweroff", "SIGINT"]] as const) {
  Deno.test({
    name: `NativePowerBackend: ${cmd} ends the PID namespace's init with ${signal} (needs root)`,
    ignore: !isRoot,
    fn: async () => {
      const inner = new URL("./power_in_pidns.ts", import.meta.url);
      Deno.env.set("MACHINED_TEST_POWER_CMD", cmd);
      try {
        const r = await rerunInNamespace("power", ["--pid", "--fork"], inner, { mode: "run" });
        assert.match(r.output, /cad: EINVAL/);
        assert.match(r.output, /kexec: EINVAL/);
        assert.match(r.output, new RegExp(`calling ${cmd}`));
        assert.doesNotMatch(r.output, /still alive/);
        assert.equal(r.signal, signal, r.output);
      } finally {
        Deno.env.delete("MACHINED_TEST_POWER_CMD");
      }
    },
  });
}
