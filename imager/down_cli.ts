/**
 * `deno task down`: stop the VM started by `deno task up` through QMP:
 * ACPI power button first, `quit` if the guest has not powered off in time.
 *
 *   deno task down [--run-dir build/qemu] [--timeout 10]
 */
import { last, parseArgs } from "./cli_args.ts";
import { attachVm } from "./qemu/vm.ts";

if (import.meta.main) {
  const args = parseArgs(Deno.args, { flags: [], options: ["run-dir", "timeout"] });
  const runDir = last(args, "run-dir") ?? "build/qemu";
  const vm = await attachVm(runDir).catch((e) => {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  });
  if (!vm) {
    console.log(`No VM recorded in ${runDir}; nothing to stop.`);
    Deno.exit(0);
  }
  const how = await vm.stop({ gracefulMs: Number(last(args, "timeout") ?? 10) * 1000 });
  const said = {
    "powerdown": "powered off after the ACPI power button",
    "quit": "did not power off in time; QEMU was told to quit",
    "not-running": "was not running any more",
  }[how];
  console.log(`VM ${vm.state.pid} ${said}.`);
}
