/**
 * systemd-boot's configuration for the A/B layout: two loader entries, one
 * per slot, each with its own kernel and initramfs, and loader.conf choosing
 * the default with no menu timeout (the menu costs boot time and there is
 * nobody at the console).
 */

/** A boot slot. */
export type Slot = "A" | "B";

/** Where a slot's files live on the ESP. */
export function slotPaths(
  slot: Slot,
): { kernel: string; initramfs: string; rootImage: string; entry: string } {
  return {
    kernel: `/${slot}/vmlinuz`,
    initramfs: `/${slot}/initramfs.img`,
    rootImage: `/${slot}/root.img`,
    entry: `/loader/entries/${slot.toLowerCase()}.conf`,
  };
}

/** loader.conf booting `defaultSlot` at once. */
export function loaderConf(defaultSlot: Slot): string {
  return [
    `default ${defaultSlot.toLowerCase()}.conf`,
    "timeout 0",
    "editor no",
    "auto-entries no",
    "auto-firmware no",
    "console-mode keep",
    "",
  ].join("\n");
}

/** The loader entry of `slot` with kernel command line `cmdline`. */
export function loaderEntry(slot: Slot, cmdline: string): string {
  const p = slotPaths(slot);
  return [
    `title machined (slot ${slot})`,
    `sort-key machined-${slot.toLowerCase()}`,
    `linux ${p.kernel}`,
    `initrd ${p.initramfs}`,
    `options ${cmdline}`,
    "",
  ].join("\n");
}

/** The root image a slot's entry names: its hash and file system type. */
export interface SlotRoot {
  sha256: string;
  fstype: "squashfs" | "erofs";
}

/**
 * `cmdline` with the slot's words before `--`: `machined.slot=A` and
 * `machined.root.sha256=<hex>` (and `machined.root.fstype=erofs` when not
 * squashfs), which machined-init reads from /proc/cmdline (the kernel keeps
 * dotted words from init's environment). Without a root image, `cmdline`.
 * Pure.
 */
export function slotCmdline(cmdline: string, slot: Slot, root?: SlotRoot): string {
  if (!root) return cmdline;
  const words = [`machined.slot=${slot}`, `machined.root.sha256=${root.sha256}`];
  if (root.fstype !== "squashfs") words.push(`machined.root.fstype=${root.fstype}`);
  const at = cmdline.indexOf(" -- ");
  if (at < 0) return `${cmdline} ${words.join(" ")}`;
  return `${cmdline.slice(0, at)} ${words.join(" ")}${cmdline.slice(at)}`;
}
