/**
 * A Unified Kernel Image: systemd's EFI stub with the kernel, the initramfs,
 * the command line and the os-release record as PE sections, so one
 * Authenticode signature covers all of them (issue 28). Under Secure Boot
 * the stub ignores a command line passed by the loader and boots with its
 * own `.cmdline`; without it, the UKI boots like the loose kernel did.
 * @module
 */
import { appendSections, type NewSection } from "./pe_sections.ts";

/** What goes into a UKI. */
export interface UkiParts {
  /** systemd's `linux<arch>.efi.stub`. */
  stub: Uint8Array;
  kernel: Uint8Array;
  initramfs: Uint8Array;
  /** The kernel command line, one line of printable ASCII. */
  cmdline: string;
  /** An os-release record (`ID=`, `VERSION_ID=`, …): systemd-boot shows it. */
  osRelease: string;
  /** The kernel's release (`uname -r`), when known. */
  uname?: string;
}

/**
 * The UKI's bytes, sections in systemd-stub's order (`.osrel`, `.cmdline`,
 * `.uname`, `.initrd`, `.linux`). Pure.
 * @throws RangeError when the command line is not one line of printable ASCII.
 */
export function buildUki(p: UkiParts): Uint8Array {
  if (!/^[\x20-\x7e]*$/.test(p.cmdline)) {
    throw new RangeError("a UKI's command line must be printable ASCII on one line");
  }
  const text = (s: string) => new TextEncoder().encode(s);
  const sections: NewSection[] = [
    { name: ".osrel", data: text(p.osRelease) },
    { name: ".cmdline", data: text(p.cmdline) },
    ...(p.uname ? [{ name: ".uname", data: text(p.uname) }] : []),
    { name: ".initrd", data: p.initramfs },
    { name: ".linux", data: p.kernel },
  ];
  return appendSections(p.stub, sections);
}
