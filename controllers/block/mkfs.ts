/**
 * Making a volume's filesystem: the exact mkfs command lines (pure, pinned by
 * tests) and running them through the process backend.
 * @module
 */
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type { VolumeFilesystem } from "../../resources/mod.ts";
import { runCommand } from "./run_command.ts";

/**
 * The mkfs command for `device`. Forces (`-F`/`-f`) because the provisioner
 * only formats a partition it just created, or one of its own that is blank;
 * ext4 initialises inode tables and journal lazily so a large EPHEMERAL is
 * ready in seconds.
 */
export function mkfsArgv(fs: VolumeFilesystem, device: string, label: string): string[] {
  switch (fs) {
    case "ext4":
      return [
        "mkfs.ext4",
        "-F",
        "-q",
        "-L",
        label,
        "-E",
        "lazy_itable_init=1,lazy_journal_init=1",
        device,
      ];
    case "xfs":
      return ["mkfs.xfs", "-f", "-q", "-L", label, device];
  }
}

/**
 * Format `device`.
 * @throws CommandError when mkfs fails; SysError when it cannot be started.
 */
export async function makeFilesystem(
  process: ProcessBackend,
  fs: VolumeFilesystem,
  device: string,
  label: string,
): Promise<void> {
  await runCommand(process, mkfsArgv(fs, device, label));
}
