/**
 * The firmware's rule, done before a byte reaches the ESP: an EFI image boots
 * under Secure Boot when one of its Authenticode signatures covers its hash and
 * was made by a db certificate or by a certificate a db certificate issued.
 * Bounded: the image's and the certificate table's sizes are checked before
 * either is parsed, the table holds at most a few entries, each is parsed once.
 * @module
 */
import { createHash } from "node:crypto";
import { AuthenticodeError } from "./authenticode_error.ts";
import {
  type AuthenticodeLimits,
  type AuthenticodeSignature,
  readAuthenticodeSignatures,
  WIN_CERT_REVISION_2_0,
  WIN_CERT_TYPE_PKCS_SIGNED_DATA,
} from "./cert_table.ts";
import { digestOf } from "./digest.ts";
import { readPeImage } from "./pe_image.ts";
import { parseSignedData, type SignedAttribute } from "./signed_data.ts";
import {
  checkSignature,
  type DbCertificate,
  parseDb,
  signerCertificate,
  trustedBy,
} from "./signer.ts";
import type { x509 } from "../../pki/mod.ts";

/** An image the db accepts. */
export interface AuthenticodeVerdict {
  ok: true;
  /** The signing certificate's subject, e.g. `O=acme, CN=acme Secure Boot db`. */
  signer: string;
  /** The db certificate that vouches for the signer: `SHA256:<hex>` of its DER. */
  dbCertificate: string;
  /** The image's Authenticode SHA-256, as its signature covers it. */
  digest: Uint8Array;
}

const SHA256 = "2.16.840.1.101.3.4.2.1";
const RSA_ENCRYPTION = "1.2.840.113549.1.1.1";
const SHA256_WITH_RSA = "1.2.840.113549.1.1.11";
/** DER of the OBJECT IDENTIFIERs of PKCS#9 contentType and messageDigest, and of SPC_INDIRECT_DATA. */
const CONTENT_TYPE_DER = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03];
const MESSAGE_DIGEST_DER = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04];
const SPC_INDIRECT_DATA_DER = [
  0x06,
  0x0a,
  0x2b,
  0x06,
  0x01,
  0x04,
  0x01,
  0x82,
  0x37,
  0x02,
  0x01,
  0x04,
];

/**
 * Verify `pe`'s Authenticode signatures against the `db` certificates; the image
 * is accepted when one signature holds, as the firmware accepts it (dbx is not
 * consulted).
 * @throws AuthenticodeError with the first signature's refusal when none holds:
 *   too-large, bad-pe, unsigned, unsupported, digest-mismatch, bad-signature,
 *   untrusted-signer.
 * @throws TypeError when a db entry is not an X.509 certificate.
 */
export async function verifyAuthenticode(
  pe: Uint8Array,
  db: readonly DbCertificate[],
  limits: AuthenticodeLimits = {},
): Promise<AuthenticodeVerdict> {
  const anchors = parseDb(db);
  const signatures = readAuthenticodeSignatures(pe, limits);
  if (signatures.length === 0) {
    throw new AuthenticodeError("unsigned", "the image has no attribute certificate table");
  }
  const digest = digestOf(pe, readPeImage(pe));
  const refusals: AuthenticodeError[] = [];
  for (const s of signatures) {
    try {
      return await verifyOne(s, digest, anchors);
    } catch (e) {
      // A library choking on hostile bytes is a malformed signature, still a typed refusal.
      refusals.push(
        e instanceof AuthenticodeError
          ? e
          : new AuthenticodeError("bad-signature", `signature at ${s.offset}: ${e}`, { cause: e }),
      );
    }
  }
  if (refusals.length === 1) throw refusals[0];
  throw new AuthenticodeError(
    refusals[0].reason,
    `none of ${refusals.length} signatures holds: ${refusals.map((r) => r.message).join("; ")}`,
    { cause: new AggregateError(refusals) },
  );
}

async function verifyOne(
  s: AuthenticodeSignature,
  digest: Uint8Array,
  db: readonly x509.X509Certificate[],
): Promise<AuthenticodeVerdict> {
  const at = `signature at ${s.offset}`;
  if (s.revision !== WIN_CERT_REVISION_2_0 || s.type !== WIN_CERT_TYPE_PKCS_SIGNED_DATA) {
    throw new AuthenticodeError(
      "unsupported",
      `${at}: revision 0x${s.revision.toString(16)}, type 0x${s.type.toString(16)} ` +
        "(only PKCS#7 SignedData, revision 2.0)",
    );
  }
  const signed = parseSignedData(s.data);
  const info = signed.signerInfo;
  const algorithms = [
    signed.imageDigestAlgorithm,
    info.digestAlgorithm.algorithm,
    info.signatureAlgorithm.algorithm,
  ];
  if (
    algorithms[0] !== SHA256 || algorithms[1] !== SHA256 ||
    ![RSA_ENCRYPTION, SHA256_WITH_RSA].includes(algorithms[2])
  ) {
    throw new AuthenticodeError("unsupported", `${at}: algorithms ${algorithms.join(", ")}`);
  }
  if (!equal(signed.imageDigest, digest)) {
    throw new AuthenticodeError(
      "digest-mismatch",
      `${at} covers ${hex(signed.imageDigest)}, the image hashes to ${hex(digest)}`,
    );
  }
  checkAttributes(at, signed.attributes, signed.indirectDataContent);
  const cert = signerCertificate(info.sid, signed.certificates, db);
  await checkSignature(cert, signed.signedAttributes, signed.signature);
  const dbCertificate = await trustedBy(cert, db);
  return { ok: true, signer: cert.subject, dbCertificate, digest };
}

/**
 * The signed attributes must bind the signature to the SpcIndirectDataContent:
 * contentType SPC_INDIRECT_DATA and messageDigest the SHA-256 of its content octets.
 * @throws AuthenticodeError bad-signature.
 */
function checkAttributes(
  at: string,
  attrs: readonly SignedAttribute[],
  content: Uint8Array,
): void {
  const only = (type: number[], name: string) => {
    const found = attrs.filter((a) => equal(a.type, Uint8Array.from(type)));
    if (found.length !== 1 || found[0].values.length !== 1) {
      throw new AuthenticodeError("bad-signature", `${at}: needs exactly one ${name} attribute`);
    }
    return found[0].values[0];
  };
  if (!equal(only(CONTENT_TYPE_DER, "contentType"), Uint8Array.from(SPC_INDIRECT_DATA_DER))) {
    throw new AuthenticodeError("bad-signature", `${at}: contentType is not SpcIndirectData`);
  }
  const md = only(MESSAGE_DIGEST_DER, "messageDigest");
  const expected = new Uint8Array(createHash("sha256").update(content).digest());
  // OCTET STRING, 32 bytes: 04 20 <digest>.
  if (!(md.length === 34 && md[0] === 0x04 && md[1] === 32 && equal(md.subarray(2), expected))) {
    throw new AuthenticodeError(
      "bad-signature",
      `${at}: messageDigest does not cover the SpcIndirectDataContent`,
    );
  }
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
