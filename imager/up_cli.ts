/**
 * `deno task up`: the main job. Generates a node (machine config, CA, admin
 * client config) in build/node on the first run, builds the image if its inputs
 * changed, boots it under QEMU in the background, waits until machined's API
 * answers over mutual TLS, installs a machinectl context for it, and says how to
 * use and stop it. Without QEMU it says what to install and runs dev mode.
 *
 *   deno task up [image options] [--node-dir build/node] [--name machined-node] [--port 50000]
 *     [--accel auto|kvm|tcg] [--memory 1024] [--timeout 300] [--run-dir build/qemu] [--snapshot]
 *
 * `--arch arm64` (an image option) boots the arm64 image under
 * qemu-system-aarch64 (virt, AAVMF, TCG); its default timeout is 900 s, as
 * emulating arm64 on x86_64 takes minutes to reach the API.
 */
import { type CliSpec, last, parseCliOrExit, type ParsedArgs } from "./cli_args.ts";
import { IMAGE_ARGS, imageOptions } from "./image_cli.ts";
import { installContext } from "./node_bundle.ts";
import { attachVm, isRunning } from "./qemu/vm.ts";
import { upHints, upNode } from "./up.ts";
import { hostArch, PROFILES } from "./arch/profiles.ts";
import { onPath } from "./run.ts";

/** `deno task up`'s usage (stdout on `--help`). */
export const UP_USAGE = `usage: deno task up [image options] [up options]
  Generates a node in build/node on the first run, builds the image if its inputs changed,
  boots it under QEMU, waits for the API over mutual TLS and adds a machinectl context.
up options:
  --node-dir build/node  --name machined-node  --port 50000
  --accel auto|kvm|tcg  --memory 1024 (MiB)  --timeout 300 (s; 900 for a foreign arch)
  --run-dir build/qemu  --snapshot (discard disk writes)
  --help                this text
image options: as "deno task image --help" (not --bundle/--signing-key)`;

/** `deno task up`'s command line: the image options and the VM's. */
export const UP_CLI: CliSpec = {
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
  usage: UP_USAGE,
};

/** Usage errors found before building or booting: bad image options, ports, accelerators. */
export function checkUpArgs(a: ParsedArgs): void {
  imageOptions(a);
  const accel = last(a, "accel");
  if (accel !== undefined && !["auto", "kvm", "tcg"].includes(accel)) {
    throw new TypeError(`--accel "${accel}" is none of auto, kvm, tcg`);
  }
  for (const name of ["port", "memory", "timeout"]) {
    const v = last(a, name);
    if (v !== undefined && !/^[1-9]\d*$/.test(v)) {
      throw new TypeError(`--${name} "${v}" is not a positive whole number`);
    }
  }
}

if (import.meta.main) {
  const args = parseCliOrExit(Deno.args, UP_CLI, checkUpArgs);
  const image = imageOptions(args);
  const arch = image.arch ?? hostArch();
  const qemu = PROFILES[arch].qemu;
  if (!(await onPath(qemu.binary))) {
    console.error(
      `[up] ${qemu.binary} is not installed, so there is no VM to boot.\n` +
        `[up] Install it with: apt-get install ${qemu.hostPackages.join(" ")} ` +
        "dosfstools mtools lz4 squashfs-tools (or: bash .ci/install.sh)",
    );
    if (arch !== hostArch()) Deno.exit(1);
    console.error("[up] Falling back to dev mode: machined unprivileged on this machine.");
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
    image: { ...image, config: last(args, "config") },
    vm: {
      arch,
      runDir,
      accel: (last(args, "accel") ?? "auto") as "auto",
      memoryMiB: Number(last(args, "memory") ?? 1024),
      snapshot: args.flags.has("snapshot"),
    },
    timeoutMs: Number(last(args, "timeout") ?? (arch === hostArch() ? 300 : 900)) * 1000,
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
