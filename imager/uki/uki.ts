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
  /** The PCR policy-signing public key, PEM (`.pcrpkey`, measured). */
  pcrPublicKey?: string;
  /** systemd's signed PCR policy JSON (`.pcrsig`, not measured; pcr_signature.ts). */
  pcrSignature?: string;
}

/**
 * The UKI's bytes, sections in systemd-stub's order (`.osrel`, `.cmdline`,
 * `.uname`, `.pcrpkey`, `.pcrsig`, `.initrd`, `.linux`). Pure.
 * @throws RangeError when the command line is not one line of printable ASCII.
 */
export function buildUki(p: UkiParts): Uint8Array {
  return appendSections(p.stub, ukiSections(p));
}

/** The sections {@link buildUki} appends, with their bytes (what the stub measures). Pure. */
export function ukiSections(p: Omit<UkiParts, "stub">): NewSection[] {
  if (!/^[\x20-\x7e]*$/.test(p.cmdline)) {
    throw new RangeError("a UKI's command line must be printable ASCII on one line");
  }
  const text = (s: string) => new TextEncoder().encode(s);
  return [
    { name: ".osrel", data: text(p.osRelease) },
    { name: ".cmdline", data: text(p.cmdline) },
    ...(p.uname ? [{ name: ".uname", data: text(p.uname) }] : []),
    ...(p.pcrPublicKey ? [{ name: ".pcrpkey", data: text(p.pcrPublicKey) }] : []),
    ...(p.pcrSignature ? [{ name: ".pcrsig", data: text(p.pcrSignature) }] : []),
    { name: ".initrd", data: p.initramfs },
    { name: ".linux", data: p.kernel },
  ];
}
