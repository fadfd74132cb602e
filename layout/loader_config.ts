/**
 * systemd-boot's configuration for the A/B layout: two loader entries, one
 * per slot, each with its own kernel and initramfs, sharing one sort-key and
 * ordered by a generation `version`; loader.conf's `default machined-*`
 * matches both (systemd-boot 252 matches the whole file name, boot counter
 * included), so the newest good entry boots and a trial that runs out of
 * tries sorts last (docs/upgrade.md). No menu timeout: there is nobody at
 * the console.
 */

import { isNodeOwnedKey } from "../bundle/mod.ts";

/** A boot slot. */
export type Slot = "A" | "B";

/** Where a slot's files live on the ESP. */
export function slotPaths(
  slot: Slot,
): { kernel: string; initramfs: string; rootImage: string; uki: string; entry: string } {
  return {
    kernel: `/${slot}/vmlinuz`,
    initramfs: `/${slot}/initramfs.img`,
    rootImage: `/${slot}/root.img`,
    uki: `/${slot}/machined.efi`,
    entry: `/loader/entries/machined-${slot.toLowerCase()}.conf`,
  };
}

/** Where the enrollment files of a Secure Boot image live (systemd-boot enrolls the `auto` set). */
export const SECURE_BOOT_KEYS_DIR = "/loader/keys/auto";

/**
 * loader.conf: the first of our entries in sort order boots, at once. Written
 * once, at build. `secureBootEnroll`: while the firmware is in Setup Mode,
 * systemd-boot enrolls the keys in {@link SECURE_BOOT_KEYS_DIR} and resets
 * (systemd-boot 252's `secure-boot-enroll force`).
 */
export function loaderConf(o: { secureBootEnroll?: boolean } = {}): string {
  return [
    "default machined-*",
    "timeout 0",
    "editor no",
    "auto-entries no",
    "auto-firmware no",
    "console-mode keep",
    ...(o.secureBootEnroll ? ["secure-boot-enroll force"] : []),
    "",
  ].join("\n");
}

/** True when a loader entry starts a UKI (an `efi` line) rather than `linux` + `initrd`. */
export function entryBootsUki(entryText: string): boolean {
  return /^efi\s/m.test(entryText);
}

/**
 * The loader entry of `slot` when the slot boots a signed Unified Kernel
 * Image: the kernel, initramfs and command line are inside it, covered by its
 * signature, so the entry only names it (`efi`) and carries no `options`
 * (under Secure Boot the stub would ignore them). Boot counting works on the
 * entry's file name as for a plain entry.
 */
export function ukiLoaderEntry(slot: Slot, o: { generation: number; version?: string }): string {
  if (o.version !== undefined) assertOneLine("version", o.version);
  return [
    `title machined${o.version ? ` ${o.version}` : ""} (slot ${slot})`,
    "sort-key machined",
    `version ${o.generation}`,
    `efi ${slotPaths(slot).uki}`,
    "",
  ].join("\n");
}

/**
 * The loader entry of `slot` with kernel command line `cmdline`; the higher
 * `generation` boots first. `version` is the image's, shown in the title.
 * @throws RangeError when `cmdline` or `version` holds a character outside
 *   printable ASCII (a newline would add lines to the entry), whoever built
 *   them.
 */
export function loaderEntry(
  slot: Slot,
  cmdline: string,
  o: { generation: number; version?: string },
): string {
  assertOneLine("command line", cmdline);
  if (o.version !== undefined) assertOneLine("version", o.version);
  const p = slotPaths(slot);
  return [
    `title machined${o.version ? ` ${o.version}` : ""} (slot ${slot})`,
    "sort-key machined",
    `version ${o.generation}`,
    `linux ${p.kernel}`,
    `initrd ${p.initramfs}`,
    `options ${cmdline}`,
    "",
  ].join("\n");
}

function assertOneLine(what: string, text: string): void {
  if (!/^[\x20-\x7e]*$/.test(text)) {
    throw new RangeError(`a loader entry's ${what} must be printable ASCII on one line`);
  }
}

/**
 * The dm-verity parameters of a root image whose hash tree follows its data
 * (imager/verity_tree.ts): format 1, sha256, 4096-byte blocks, the tree at
 * block `dataBlocks` of the same file.
 */
export interface SlotVerity {
  rootHash: string;
  salt: string;
  dataBlocks: number;
}

/** The root image a slot's entry names: its hash, file system type and, when it has one, its verity tree. */
export interface SlotRoot {
  sha256: string;
  fstype: "squashfs" | "erofs";
  verity?: SlotVerity;
}

/**
 * `cmdline` with the slot's words before `--`: `machined.slot=A` and
 * `machined.root.sha256=<hex>` (and `machined.root.fstype=erofs` when not
 * squashfs, and `machined.root.verity=<root hash>,<salt>,<data blocks>` when
 * the image carries a dm-verity tree: machined-init then mounts it through
 * dm-verity instead of hashing the file first), which machined-init reads
 * from /proc/cmdline (the kernel keeps dotted words from init's
 * environment). Without a root image, `cmdline`. Pure.
 * @throws RangeError when `cmdline` carries such a word already (two
 *   `machined.slot=` words are how an entry lies about its slot).
 */
export function slotCmdline(cmdline: string, slot: Slot, root?: SlotRoot): string {
  if (!root) return cmdline;
  const owned = kernelWords(cmdline).find((w) => isNodeOwnedKey(w.split("=", 1)[0]));
  if (owned) {
    throw new RangeError(
      `the command line already carries ${owned}: the slot and root words are written once, here`,
    );
  }
  const words = [`machined.slot=${slot}`, `machined.root.sha256=${root.sha256}`];
  if (root.fstype !== "squashfs") words.push(`machined.root.fstype=${root.fstype}`);
  if (root.verity) words.push(verityWord(root.verity));
  const at = cmdline.indexOf(" -- ");
  if (at < 0) return `${cmdline} ${words.join(" ")}`;
  return `${cmdline.slice(0, at)} ${words.join(" ")}${cmdline.slice(at)}`;
}

/** `machined.root.verity=<root hash>,<salt>,<data blocks>`: the one word machined-init reads. Pure. */
export function verityWord(v: SlotVerity): string {
  return `machined.root.verity=${v.rootHash},${v.salt},${v.dataBlocks}`;
}

/**
 * `cmdline` with the verity word before `--`: what an upgrade bundle's
 * manifest carries as its command line, so a node of any version that writes
 * the other slot's entry from it (slotCmdline) names the tree its new
 * machined-init reads; the signed manifest's shape does not change. Pure.
 */
export function cmdlineWithVerity(cmdline: string, v: SlotVerity | undefined): string {
  if (!v) return cmdline;
  const at = cmdline.indexOf(" -- ");
  if (at < 0) return `${cmdline} ${verityWord(v)}`;
  return `${cmdline.slice(0, at)} ${verityWord(v)}${cmdline.slice(at)}`;
}

/** The words before `--`: what the kernel and machined-init read. Pure. */
export function kernelWords(cmdline: string): string[] {
  const words = cmdline.split(/\s+/).filter((w) => w !== "");
  const end = words.indexOf("--");
  return end < 0 ? words : words.slice(0, end);
}

/**
 * The slot a kernel command line names: its one `machined.slot=A` or `=B`
 * word before `--`. Undefined when there is none, or more than one (even
 * two that agree): machined-init refuses such an entry too, so machined
 * never acts on a slot it cannot be sure it booted. Pure.
 */
export function slotOfCmdline(cmdline: string): Slot | undefined {
  const named = kernelWords(cmdline).filter((w) => w.split("=", 1)[0] === "machined.slot");
  if (named.length !== 1) return undefined;
  const value = named[0].slice("machined.slot=".length);
  return value === "A" || value === "B" ? value : undefined;
}
