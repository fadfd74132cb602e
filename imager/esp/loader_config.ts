/**
 * systemd-boot's configuration for the A/B layout: two loader entries, one
 * per slot, each with its own kernel and initramfs, and loader.conf choosing
 * the default with no menu timeout (the menu costs boot time and there is
 * nobody at the console).
 */

/** A boot slot. */
export type Slot = "A" | "B";

/** Where a slot's files live on the ESP. */
export function slotPaths(slot: Slot): { kernel: string; initramfs: string; entry: string } {
  return {
    kernel: `/${slot}/vmlinuz`,
    initramfs: `/${slot}/initramfs.img`,
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
