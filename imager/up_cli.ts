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
import { last, parseArgs } from "./cli_args.ts";
import { IMAGE_ARGS, imageOptions } from "./image_cli.ts";
import { installContext } from "./node_bundle.ts";
import { attachVm, isRunning } from "./qemu/vm.ts";
import { upHints, upNode } from "./up.ts";

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
  const log = (line: string) => console.error(`[up] ${line}`);
  const node = await upNode({
    nodeDir: last(args, "node-dir") ?? "build/node",
    name,
    port,
    image: { ...imageOptions(args), config: last(args, "config") },
    vm: {
      runDir,
      accel: (last(args, "accel") ?? "auto") as "auto",
      memoryMiB: Number(last(args, "memory") ?? 1024),
      snapshot: args.flags.has("snapshot"),
    },
    timeoutMs: Number(last(args, "timeout") ?? 300) * 1000,
    log,
  }).catch((e) => {
    log(`${(e as Error).message}\n[up] QEMU stopped`);
    Deno.exit(1);
  });
  log(`${node.hostname} answered over mutual TLS after ${(node.apiMs / 1000).toFixed(1)}s`);
  const installed = await installContext(node.bundle.paths.clientConfig, name, port).catch((e) => {
    log(`could not add a context to your machinectl config: ${e.message}`);
    return undefined;
  });
  console.log(upHints(node, name, { installedIn: installed, runDir }));
}

async function hasQemu(): Promise<boolean> {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin").split(":")) {
    if (await Deno.stat(`${dir}/${QEMU}`).then(() => true, () => false)) return true;
  }
  return false;
}
