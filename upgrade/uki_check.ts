/**
 * The node's own check of a Secure Boot bundle's UKIs, before it writes a
 * byte of them (issue 28): each must verify against the db the firmware has
 * enrolled (Authenticode, as the firmware will check it at boot), and its
 * signed command line must name the slot it is for and this bundle's root
 * image. So a bundle signed by a trusted bundle key still cannot install a
 * kernel the firmware would refuse, nor a UKI that boots another slot's or
 * another version's root.
 * @module
 */
import {
  type DbCertificate,
  isAuthenticodeError,
  peSection,
  verifyAuthenticode,
} from "../bundle/authenticode/mod.ts";
import { BundleError, type Manifest, MAX_UKI_BYTES } from "../bundle/mod.ts";
import {
  EFI_CERT_X509_GUID,
  EFI_IMAGE_SECURITY_DATABASE_GUID,
  type FirmwareBackend,
  MAX_SIGNATURE_DATABASE_BYTES,
  parseSignatureLists,
} from "../platform/firmware/mod.ts";
import { kernelWords, type Slot, slotOfCmdline } from "../layout/mod.ts";

/** The UKI file of `slot` in a UKI bundle. */
export function ukiFileOf(slot: Slot): "machined-a.efi" | "machined-b.efi" {
  return slot === "A" ? "machined-a.efi" : "machined-b.efi";
}

/**
 * Check the bundle file `name` (a slot's UKI, its bytes in memory) against
 * `db` and the manifest's root image.
 * @throws BundleError untrusted-uki (no db, unsigned, another owner's, changed),
 *   bad-uki (not a PE image, no command line, another slot or root).
 */
export async function checkSlotUki(
  name: string,
  uki: Uint8Array,
  o: { manifest: Manifest; db: readonly DbCertificate[] },
): Promise<void> {
  const slot: Slot = name === ukiFileOf("A") ? "A" : "B";
  if (o.db.length === 0) {
    throw new BundleError(
      "untrusted-uki",
      `${name}: this node has no certificate in its Secure Boot db, so no UKI can be trusted`,
    );
  }
  try {
    await verifyAuthenticode(uki, o.db, { maxPeBytes: MAX_UKI_BYTES });
  } catch (e) {
    if (!isAuthenticodeError(e)) throw e;
    const untrusted = ["unsigned", "untrusted-signer", "bad-signature", "digest-mismatch"];
    throw new BundleError(
      untrusted.includes(e.reason) ? "untrusted-uki" : "bad-uki",
      `${name}: ${e.message}`,
    );
  }
  const section = peSection(uki, ".cmdline");
  if (!section) throw new BundleError("bad-uki", `${name} has no .cmdline section`);
  const cmdline = new TextDecoder().decode(section).replace(/\0+$/, "").trim();
  const named = slotOfCmdline(cmdline);
  if (named !== slot) {
    throw new BundleError(
      "bad-uki",
      `${name}'s signed command line names slot ${named ?? "(none or several)"}, not ${slot}`,
    );
  }
  const root = o.manifest.files.find((f) => f.name === "root.img")?.sha256;
  const word = kernelWords(cmdline).find((w) => w.startsWith("machined.root.sha256="));
  if (!root || word !== `machined.root.sha256=${root}`) {
    throw new BundleError(
      "bad-uki",
      `${name}'s signed command line names root ${word ?? "(none)"}, not this bundle's ` +
        `root.img (${root?.slice(0, 12)}…)`,
    );
  }
}

/**
 * The X.509 certificates of the firmware's db (what the node checks UKIs
 * against); none without EFI or a db.
 * @throws BundleError untrusted-uki when the db cannot be read or parsed.
 */
export async function enrolledDb(firmware: FirmwareBackend): Promise<DbCertificate[]> {
  try {
    const bytes = await firmware.efiVariable(
      "db",
      EFI_IMAGE_SECURITY_DATABASE_GUID,
      MAX_SIGNATURE_DATABASE_BYTES,
    );
    if (!bytes) return [];
    return parseSignatureLists(bytes)
      .filter((s) => s.type === EFI_CERT_X509_GUID)
      .map((s) => ({ der: s.data }));
  } catch (e) {
    throw new BundleError(
      "untrusted-uki",
      `the Secure Boot db could not be read, so no UKI can be checked: ${(e as Error).message}`,
    );
  }
}
