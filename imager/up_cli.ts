/**
 * `deno task up`: build the image if it is missing or its inputs changed,
 * boot it under QEMU in the background, wait until the forwarded API port
 * answers (or a console line appears), and say how to use and stop it.
 *
 *   deno task up [image options] [--port 50000] [--accel auto|kvm|tcg] [--memory 1024]
 *     [--wait-console REGEX] [--timeout 180] [--run-dir build/qemu] [--snapshot]
 */
import { buildImage } from "./build_image.ts";
import { last, parseArgs } from "./cli_args.ts";
import { IMAGE_ARGS, imageOptions } from "./image_cli.ts";
import { attachVm, isRunning, startVm } from "./qemu/vm.ts";

if (import.meta.main) {
  const args = parseArgs(Deno.args, {
    flags: [...IMAGE_ARGS.flags, "snapshot"],
    options: [
      ...IMAGE_ARGS.options,
      "port",
      "accel",
      "memory",
      "wait-console",
      "timeout",
      "run-dir",
    ],
  });
  const runDir = last(args, "run-dir") ?? "build/qemu";
  const existing = await attachVm(runDir).catch(() => undefined);
  if (existing && (await isRunning(existing.state.pid))) {
    console.error(
      `A VM is already running from ${runDir} (pid ${existing.state.pid}); run "deno task down" first.`,
    );
    Deno.exit(1);
  }
  const image = await buildImage(imageOptions(args));
  const port = Number(last(args, "port") ?? 50000);
  const timeoutMs = Number(last(args, "timeout") ?? 180) * 1000;
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
    const pattern = last(args, "wait-console");
    if (pattern) {
      const m = await vm.waitForConsole(new RegExp(pattern), { timeoutMs, failOn: /Kernel panic/ });
      console.error(`[up] console matched after ${secs(t0)}s: ${m[0].trim()}`);
    } else {
      await vm.waitForPort({ timeoutMs });
      console.error(`[up] 127.0.0.1:${port} answered after ${secs(t0)}s`);
    }
  } catch (e) {
    console.error(`[up] ${(e as Error).message}\n[up] stopping QEMU`);
    await vm.stop({ gracefulMs: 0 });
    Deno.exit(1);
  }
  console.log(
    [
      `The node is up. The API (port 50000 in the guest) is at 127.0.0.1:${port}.`,
      `  machinectl --endpoint 127.0.0.1:${port} ...`,
      `  console log: tail -f ${vm.state.consoleLog}`,
      `  stop it:     deno task down${runDir !== "build/qemu" ? ` --run-dir ${runDir}` : ""}`,
    ].join("\n"),
  );
}

function secs(t0: number): string {
  return ((performance.now() - t0) / 1000).toFixed(1);
}
