/**
 * Authenticode verification of UEFI PE images against a Secure Boot db, as the
 * firmware does it, so the node can refuse an image before writing a byte of it
 * to the ESP: the image's PE/COFF Authenticode hash, its attribute certificate
 * table, and each PKCS#7 signature checked against the db's certificates. Pure
 * TypeScript and bounded (image and table sizes capped before parsing).
 *
 * @example
 * ```ts
 * import { isAuthenticodeError, verifyAuthenticode } from "./bundle/authenticode/mod.ts";
 *
 * const uki = await Deno.readFile("machined-a.efi");
 * try {
 *   const v = await verifyAuthenticode(uki, [{ certPem: await Deno.readTextFile("db.crt") }]);
 *   console.log(`signed by ${v.signer}, trusted through ${v.dbCertificate}`);
 * } catch (e) {
 *   if (isAuthenticodeError(e)) console.error(e.reason, e.message);
 *   else throw e;
 * }
 * ```
 * @module
 */
export {
  AuthenticodeError,
  type AuthenticodeRefusal,
  isAuthenticodeError,
} from "./authenticode_error.ts";
export { type AuthenticodeDigest, authenticodeDigest, DEFAULT_MAX_PE_BYTES } from "./digest.ts";
export {
  type AuthenticodeLimits,
  type AuthenticodeSignature,
  MAX_CERT_TABLE_BYTES,
  MAX_SIGNATURES,
  readAuthenticodeSignatures,
  WIN_CERT_REVISION_2_0,
  WIN_CERT_TYPE_PKCS_SIGNED_DATA,
} from "./cert_table.ts";
export { type DbCertificate } from "./signer.ts";
export { type AuthenticodeVerdict, verifyAuthenticode } from "./verify.ts";
export { peSection, type PeSectionRange } from "./pe_image.ts";
