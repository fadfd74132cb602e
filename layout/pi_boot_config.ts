/**
 * The Raspberry Pi firmware's configuration for the A/B layout, as pure
 * renderers. config.txt is written once, at build time; it selects the slot
 * through two included files, so an upgrade or a blessing rewrites a one-line
 * file and never the whole configuration:
 *
 * - `slot.txt`: `os_prefix=A/`, the blessed slot. os_prefix is prepended to
 *   every operating-system file the firmware loads (kernel, initramfs,
 *   cmdline.txt, the device tree), so a slot is a directory. A comment
 *   `# fallback B` names the other slot while it is a good one to roll back to.
 * - `trial.txt`: empty, or `os_prefix=B/` for one trial boot of the other
 *   slot (read after slot.txt, so it wins). The Pi 3's firmware has no
 *   `tryboot` (Pi 4 and 5 only) and no boot counter, so machined-init empties
 *   it on the trial boot itself: a trial that fails after that boots the
 *   blessed slot again (docs/decisions.md, "A/B on the Raspberry Pi 3").
 */
import type { Slot } from "./loader_config.ts";

/** The files on the boot partition the firmware reads for the slot choice. */
export const PI_BOOT_FILES = {
  config: "/config.txt",
  slot: "/slot.txt",
  trial: "/trial.txt",
} as const;

/** Where a slot's files live on the boot partition (os_prefix `A/`). */
export function piSlotPaths(slot: Slot): {
  dir: string;
  kernel: string;
  initramfs: string;
  rootImage: string;
  cmdline: string;
} {
  return {
    dir: `/${slot}`,
    kernel: `/${slot}/vmlinuz`,
    initramfs: `/${slot}/initramfs.img`,
    rootImage: `/${slot}/root.img`,
    cmdline: `/${slot}/cmdline.txt`,
  };
}

/**
 * config.txt: 64-bit, the mini UART on (its clock fixed, as the console
 * needs), upstream device-tree names (bcm2837-rpi-3-b.dtb), the kernel and
 * initramfs named relative to the slot's prefix, then the slot files.
 */
export function piConfigTxt(): string {
  return [
    "# machined: Raspberry Pi 3 boot configuration, written once by the imager.",
    "# The slot is chosen in slot.txt (blessed) and trial.txt (one trial boot).",
    "arm_64bit=1",
    "enable_uart=1",
    "upstream_kernel=1",
    "kernel=vmlinuz",
    "initramfs initramfs.img followkernel",
    "include slot.txt",
    "include trial.txt",
    "",
  ].join("\n");
}

/**
 * slot.txt naming the blessed `slot`, and the other slot if it is a good
 * fallback (`# fallback B`, a comment to the firmware): the Pi's record of
 * which slots may be rolled back to, as the ESP's blessed entries are.
 */
export function piSlotTxt(slot: Slot, fallback?: Slot): string {
  return `os_prefix=${slot}/\n` + (fallback ? `# fallback ${fallback}\n` : "");
}

/** The slot slot.txt's `# fallback X` names, if any. Pure. */
export function parseFallback(text: string): Slot | undefined {
  return /^# fallback ([AB])\s*$/m.exec(text)?.[1] as Slot | undefined;
}

/** trial.txt: one trial boot of `slot`, or none. */
export function piTrialTxt(slot?: Slot): string {
  return slot ? `os_prefix=${slot}/\n` : "# no trial\n";
}

/** The slot an `os_prefix=X/` file names, or undefined (none, or not ours). */
export function parseOsPrefix(text: string): Slot | undefined {
  let found: Slot | undefined;
  for (const line of text.split("\n")) {
    const m = /^\s*os_prefix=([AB])\/\s*$/.exec(line);
    if (m) found = m[1] as Slot;
  }
  return found;
}

/** A slot's cmdline.txt: one line, as the firmware wants it. */
export function piCmdlineTxt(cmdline: string): string {
  return cmdline.replaceAll("\n", " ").trim() + "\n";
}
