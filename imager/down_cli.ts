/**
 * `deno task down`: stop the VM started by `deno task up`. First the clean way,
 * through machined's API (Shutdown: services stopped, disks synced and
 * unmounted, power off), then QMP: the ACPI power button, and `quit` if the
 * guest has not powered off in time.
 *
 *   deno task down [--run-dir build/qemu] [--node-dir build/node] [--timeout 60]
 */
import { join } from "node:path";
import { type CliSpec, last, parseCliOrExit, type ParsedArgs } from "./cli_args.ts";
import { attachVm, isRunning, type Vm } from "./qemu/vm.ts";
import { BUNDLE_FILES, readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { createMachineClient } from "../api/client/mod.ts";

/** `deno task down`'s command line. */
export const DOWN_CLI: CliSpec = {
  flags: [],
  options: ["run-dir", "node-dir", "timeout"],
  usage: `usage: deno task down [--run-dir build/qemu] [--node-dir build/node] [--timeout 60]
  Stops the VM "deno task up" started: machined's Shutdown over the API, then QMP's
  power button, then quit if it has not powered off within --timeout seconds.
  --help  this text`,
};

/** Usage errors found before touching the VM. */
export function checkDownArgs(a: ParsedArgs): void {
  const v = last(a, "timeout");
  if (v !== undefined && !/^[1-9]\d*$/.test(v)) {
    throw new TypeError(`--timeout "${v}" is not a positive whole number of seconds`);
  }
}

if (import.meta.main) {
  const args = parseCliOrExit(Deno.args, DOWN_CLI, checkDownArgs);
  const runDir = last(args, "run-dir") ?? "build/qemu";
  const timeoutMs = Number(last(args, "timeout") ?? 60) * 1000;
  const vm = await attachVm(runDir).catch((e) => {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  });
  if (!vm || !(await isRunning(vm.state.pid))) {
    console.log(`No VM running from ${runDir}; nothing to stop.`);
    Deno.exit(0);
  }
  const clientConfig = join(last(args, "node-dir") ?? "build/node", BUNDLE_FILES.clientConfig);
  if (await shutdownOverApi(vm, clientConfig, timeoutMs)) {
    console.log(`VM ${vm.state.pid} powered off through machined's Shutdown.`);
    Deno.exit(0);
  }
  const how = await vm.stop({ gracefulMs: 10_000 });
  const said = {
    "powerdown": "powered off after the ACPI power button",
    "quit": "did not power off in time; QEMU was told to quit",
    "not-running": "was not running any more",
  }[how];
  console.log(`VM ${vm.state.pid} ${said}.`);
}

/** Asks machined to shut down and waits for QEMU to exit; false when that did not work. */
async function shutdownOverApi(vm: Vm, clientConfig: string, timeoutMs: number): Promise<boolean> {
  try {
    const creds = resolveCredentials(await readClientConfig(clientConfig));
    const client = createMachineClient({
      ...creds,
      endpoint: `127.0.0.1:${vm.state.hostPort}`,
    });
    try {
      await client.api.shutdown({}, { timeoutMs: 10_000 });
    } finally {
      client.close();
    }
  } catch (e) {
    console.error(`[down] Shutdown over the API failed (${(e as Error).message}); using QMP`);
    return false;
  }
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (!(await isRunning(vm.state.pid))) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.error(`[down] the node did not power off within ${timeoutMs / 1000}s; using QMP`);
  return false;
}
