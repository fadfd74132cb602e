/**
 * `deno task up`: the main job. Generates a node (machine config, CA, admin
 * client config) in build/node on the first run, builds the image if its inputs
 * changed, boots it under QEMU in the background, waits until machined's API
 * answers over mutual TLS, installs a machinectl context for it, and says how to
 * use and stop it. Without QEMU it says what to install and runs dev mode.
 *
 *   deno task up [image options] [--node-dir build/node] [--name machined-node] [--port 50000]
 *     [--accel auto|kvm|tcg] [--memory 1024] [--timeout 300] [--run-dir build/qemu] [--snapshot]
 */
import { buildImage } from "./build_image.ts";
import { last, parseArgs } from "./cli_args.ts";
import { IMAGE_ARGS, imageOptions } from "./image_cli.ts";
import { ensureNodeBundle, installContext } from "./node_bundle.ts";
import { attachVm, isRunning, startVm } from "./qemu/vm.ts";
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { createMachineClient } from "../api/client/mod.ts";

const QEMU = "qemu-system-x86_64";

if (import.meta.main) {
  const args = parseArgs(Deno.args, {
    flags: [...IMAGE_ARGS.flags, "snapshot"],
    options: [
      ...IMAGE_ARGS.options,
      "node-dir",
      "name",
      "port",
      "accel",
      "memory",
      "timeout",
      "run-dir",
    ],
  });
  if (!(await hasQemu())) {
    console.error(
      `[up] ${QEMU} is not installed, so there is no VM to boot.\n` +
        "[up] Install it with: apt-get install qemu-system-x86 ovmf systemd-boot-efi " +
        "dosfstools mtools zstd (or: bash .ci/install.sh)\n" +
        "[up] Falling back to dev mode: machined unprivileged on this machine.",
    );
    const { main } = await import("../main.ts");
    Deno.exit(await main(["dev"]));
  }
  const runDir = last(args, "run-dir") ?? "build/qemu";
  const existing = await attachVm(runDir).catch(() => undefined);
  if (existing && (await isRunning(existing.state.pid))) {
    console.error(
      `[up] A VM is already running from ${runDir} (pid ${existing.state.pid}); ` +
        `run "deno task down" first.`,
    );
    Deno.exit(1);
  }
  const port = Number(last(args, "port") ?? 50000);
  const name = last(args, "name") ?? "machined-node";
  const nodeDir = last(args, "node-dir") ?? "build/node";
  const bundle = await ensureNodeBundle(nodeDir, { name, port });
  console.error(
    `[up] node ${bundle.created ? "generated" : "reused"}: ${bundle.paths.machineConfig}`,
  );
  const image = await buildImage({
    ...imageOptions(args),
    config: last(args, "config") ?? bundle.paths.machineConfig,
  });
  const timeoutMs = Number(last(args, "timeout") ?? 300) * 1000;
  const t0 = performance.now();
  const vm = await startVm({
    image: image.out,
    runDir,
    hostPort: port,
    accel: (last(args, "accel") ?? "auto") as "auto",
    memoryMiB: Number(last(args, "memory") ?? 1024),
    snapshot: args.flags.has("snapshot"),
  });
  console.error(
    `[up] QEMU pid ${vm.state.pid} (${vm.state.accel}), console: ${vm.state.consoleLog}`,
  );
  try {
    await vm.waitForConsole(/machined: API ready/, {
      timeoutMs,
      failOn: /Kernel panic|machined: FATAL|machined-init: FATAL/,
    });
    const hostname = await waitForApi(bundle.paths.clientConfig, port, timeoutMs);
    console.error(`[up] ${hostname} answered over mutual TLS after ${secs(t0)}s`);
  } catch (e) {
    console.error(`[up] ${(e as Error).message}\n[up] stopping QEMU`);
    await vm.stop({ gracefulMs: 0 });
    Deno.exit(1);
  }
  const installed = await installContext(bundle.paths.clientConfig, name, port).catch((e) => {
    console.error(`[up] could not add a context to your machinectl config: ${e.message}`);
    return undefined;
  });
  console.log(
    [
      `The node "${name}" is up; its API is at 127.0.0.1:${port} (port 50000 in the guest).`,
      `  deno task machinectl --config ${bundle.paths.clientConfig} get machinestatus`,
      `  deno task machinectl --config ${bundle.paths.clientConfig} get services`,
      `  deno task machinectl --config ${bundle.paths.clientConfig} events`,
      ...(installed
        ? [
          `  (context "${name}" is also current in ${installed}: plain \`machinectl get ...\` works)`,
        ]
        : []),
      `  console log: tail -f ${vm.state.consoleLog}`,
      `  stop it:     deno task down${runDir !== "build/qemu" ? ` --run-dir ${runDir}` : ""}`,
    ].join("\n"),
  );
}

/** Calls Version until it succeeds; returns the node's hostname. */
async function waitForApi(clientConfig: string, port: number, timeoutMs: number): Promise<string> {
  const creds = resolveCredentials(await readClientConfig(clientConfig));
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  while (performance.now() < deadline) {
    const client = createMachineClient({ ...creds, endpoint: `127.0.0.1:${port}` });
    try {
      const v = await client.api.version({}, { timeoutMs: 5_000 });
      return v.hostname;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      client.close();
    }
  }
  throw new Error(`the API did not answer within ${timeoutMs / 1000}s: ${String(last)}`);
}

async function hasQemu(): Promise<boolean> {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin").split(":")) {
    if (await Deno.stat(`${dir}/${QEMU}`).then(() => true, () => false)) return true;
  }
  return false;
}

function secs(t0: number): string {
  return ((performance.now() - t0) / 1000).toFixed(1);
}
