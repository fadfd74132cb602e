/**
 * A software TPM 2.0 for a VM (swtpm, Debian's swtpm package): its state in
 * a directory of the run directory, so the TPM survives a guest's restarts
 * as a real one survives reboots; one swtpm per QEMU launch, ending with it.
 * @module
 */
import { join } from "node:path";
import { CommandError } from "../run.ts";

/** Where one VM's TPM keeps its state, its control socket and its log. */
export function swtpmPaths(runDir: string) {
  const dir = join(runDir, "tpm");
  return {
    dir,
    socket: join(dir, "swtpm.sock"),
    pidFile: join(dir, "swtpm.pid"),
    log: join(dir, "swtpm.log"),
  };
}

/**
 * Start swtpm as a daemon on a Unix control socket (it ends when QEMU's
 * connection closes), and return the QEMU arguments that attach it as a
 * TIS device. The state directory is kept: PCRs start at zero on every boot
 * (the firmware's TPM2_Startup(CLEAR)), the TPM's seeds do not change.
 * @throws CommandError when swtpm does not start.
 */
export async function startSwtpm(runDir: string): Promise<string[]> {
  const p = swtpmPaths(runDir);
  await Deno.mkdir(p.dir, { recursive: true });
  await stopStale(p.pidFile);
  await Deno.remove(p.socket).catch(() => {});
  const args = [
    "socket",
    "--tpm2",
    "--tpmstate",
    `dir=${p.dir}`,
    "--ctrl",
    `type=unixio,path=${p.socket}`,
    "--pid",
    `file=${p.pidFile}`,
    "--log",
    `file=${p.log},level=1`,
    "--terminate",
    "--daemon",
  ];
  const out = await new Deno.Command("swtpm", { args, stdout: "piped", stderr: "piped" })
    .output().catch((e) => {
      throw new CommandError("swtpm", args, -1, `cannot start: ${e.message}`, { cause: e });
    });
  if (!out.success) {
    throw new CommandError("swtpm", args, out.code, new TextDecoder().decode(out.stderr));
  }
  return [
    "-chardev",
    `socket,id=chrtpm,path=${p.socket}`,
    "-tpmdev",
    "emulator,id=tpm0,chardev=chrtpm",
    "-device",
    "tpm-tis,tpmdev=tpm0",
  ];
}

/** End a swtpm an earlier launch left (a QEMU that failed before connecting): it holds the state's lock. */
async function stopStale(pidFile: string): Promise<void> {
  const pid = Number((await Deno.readTextFile(pidFile).catch(() => "")).trim());
  if (!pid) return;
  const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
  if (!cmdline.includes("swtpm")) return;
  Deno.kill(pid, "SIGTERM");
  for (let i = 0; i < 40 && await Deno.stat(`/proc/${pid}`).then(() => true, () => false); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
}
