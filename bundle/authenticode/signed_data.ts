/**
 * An Authenticode signature's PKCS#7 SignedData, taken apart: the
 * SpcIndirectDataContent it signs (the image's hash), its one SignerInfo, the
 * signed attributes as the signer signed them (re-tagged as a SET) and the
 * certificates it carries. The structure is walked strictly first (DER, each
 * element where the syntax puts it), so the typed parse by @peculiar/asn1-cms,
 * which is lenient, reads the same elements; the bytes a signature or a digest
 * covers are cut from the input as they are, never re-encoded.
 * @module
 */
import { AsnConvert, AsnProp, AsnPropTypes, OctetString } from "@peculiar/asn1-schema";
import { ContentInfo, SignedData, type SignerInfo } from "@peculiar/asn1-cms";
import { AlgorithmIdentifier } from "@peculiar/asn1-x509";
import { AuthenticodeError } from "./authenticode_error.ts";
import { derBytes, derChildren, type DerElement, derElement } from "./der.ts";

/** id-signedData (PKCS#7). */
export const ID_SIGNED_DATA = "1.2.840.113549.1.7.2";
/** SPC_INDIRECT_DATA_OBJID: the content an Authenticode signature signs. */
export const SPC_INDIRECT_DATA = "1.3.6.1.4.1.311.2.1.4";

/** DigestInfo ::= SEQUENCE { digestAlgorithm AlgorithmIdentifier, digest OCTET STRING } */
class DigestInfo {
  digestAlgorithm = new AlgorithmIdentifier();
  digest = new OctetString();
}
AsnProp({ type: AlgorithmIdentifier })(DigestInfo.prototype, "digestAlgorithm");
AsnProp({ type: OctetString })(DigestInfo.prototype, "digest");

/** SpcIndirectDataContent ::= SEQUENCE { data SpcAttributeTypeAndOptionalValue, messageDigest DigestInfo } */
class SpcIndirectDataContent {
  data = new ArrayBuffer(0);
  messageDigest = new DigestInfo();
}
AsnProp({ type: AsnPropTypes.Any })(SpcIndirectDataContent.prototype, "data");
AsnProp({ type: DigestInfo })(SpcIndirectDataContent.prototype, "messageDigest");

/** One signed attribute as found: the OBJECT IDENTIFIER's DER and each value's DER. */
export interface SignedAttribute {
  type: Uint8Array;
  values: Uint8Array[];
}

/** One PKCS#7 Authenticode signature, taken apart. */
export interface AuthenticodeSignedData {
  /** The SpcIndirectDataContent's content octets (what messageDigest covers). */
  indirectDataContent: Uint8Array;
  /** The image hash the signer signed: its algorithm OID and value. */
  imageDigestAlgorithm: string;
  imageDigest: Uint8Array;
  signerInfo: SignerInfo;
  /** The signed attributes' DER with the SET tag (0x31): what the signature covers. */
  signedAttributes: Uint8Array;
  /** The signed attributes, walked strictly: each type's OID DER and its values' DER. */
  attributes: SignedAttribute[];
  /** The SignerInfo's signature value. */
  signature: Uint8Array;
  /** Each certificate the SignedData carries, DER as found. */
  certificates: Uint8Array[];
}

/**
 * Take apart a PKCS#7 ContentInfo (trailing zero padding allowed).
 * @throws AuthenticodeError bad-signature when it is malformed, unsupported when
 *   it is not SignedData over SpcIndirectDataContent with one signer and signed
 *   attributes.
 */
export function parseSignedData(blob: Uint8Array): AuthenticodeSignedData {
  const raw = rawParts(blob);
  let signedData: SignedData;
  let indirect: SpcIndirectDataContent;
  try {
    const info = AsnConvert.parse(raw.der, ContentInfo);
    if (info.contentType !== ID_SIGNED_DATA) {
      throw new AuthenticodeError(
        "unsupported",
        `content type ${info.contentType} is not signedData`,
      );
    }
    signedData = AsnConvert.parse(info.content, SignedData);
    const type = signedData.encapContentInfo.eContentType;
    if (type !== SPC_INDIRECT_DATA) {
      throw new AuthenticodeError("unsupported", `signed content ${type} is not SpcIndirectData`);
    }
    indirect = AsnConvert.parse(raw.indirectData, SpcIndirectDataContent);
  } catch (e) {
    if (e instanceof AuthenticodeError) throw e;
    throw malformed(`cannot parse the PKCS#7 SignedData: ${(e as Error).message}`, e);
  }
  const outer = derElement(raw.indirectData)!;
  return {
    indirectDataContent: raw.indirectData.subarray(outer.contentAt),
    imageDigestAlgorithm: indirect.messageDigest.digestAlgorithm.algorithm,
    imageDigest: new Uint8Array(indirect.messageDigest.digest.buffer),
    signerInfo: signedData.signerInfos[0],
    signedAttributes: raw.signedAttributes,
    attributes: raw.attributes,
    signature: raw.signature,
    certificates: raw.certificates,
  };
}

/** SignedData: version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos. */
const SIGNED_DATA = /^02 31 30( a0)?( a1)? 31$/;
/** SignerInfo: version, sid, digestAlgorithm, [0] signedAttrs?, signatureAlgorithm, signature, [1] unsignedAttrs?. */
const SIGNER_INFO = /^02 (30|80) 30( a0)? 30 04( a1)?$/;

/** The bytes cut from the input, each element checked to be where the syntax puts it. */
function rawParts(blob: Uint8Array) {
  const info = derElement(blob);
  if (info === undefined || info.tag !== 0x30) throw malformed("not a DER SEQUENCE");
  if (blob.subarray(info.end).some((b) => b !== 0)) {
    throw malformed(`${blob.length - info.end} bytes that are not padding follow the PKCS#7 blob`);
  }
  const der = blob.subarray(0, info.end);
  const [, explicit] = shaped(der, info, /^06 a0$/);
  const [signedData] = shaped(der, explicit, /^30$/);
  const parts = shaped(der, signedData, SIGNED_DATA);
  const [, eContent] = shaped(der, parts[2], /^06 a0$/);
  const [indirect] = shaped(der, eContent, /^30$/);
  const certs = parts.find((p) => p.tag === 0xa0);
  const signers = shaped(der, parts[parts.length - 1], /^(30 ?)*$/);
  if (signers.length !== 1) {
    throw new AuthenticodeError("unsupported", `${signers.length} signers (Authenticode has one)`);
  }
  const signer = shaped(der, signers[0], SIGNER_INFO);
  if (signer[3].tag !== 0xa0) {
    throw new AuthenticodeError("unsupported", "the SignerInfo has no signed attributes");
  }
  const attributes = shaped(der, signer[3], /^30( 30)*$/).map((a) => {
    const [type, values] = shaped(der, a, /^06 31$/);
    const each = shaped(der, values, /^[0-9a-f]{2}( [0-9a-f]{2})*$/);
    return { type: derBytes(der, type), values: each.map((v) => derBytes(der, v)) };
  });
  const signedAttributes = derBytes(der, signer[3]).slice();
  signedAttributes[0] = 0x31; // [0] IMPLICIT SET OF -> SET OF, as signed
  const certificates = certs === undefined
    ? []
    : shaped(der, certs, /^(30 ?)*$/).map((c) => derBytes(der, c));
  return {
    der,
    indirectData: derBytes(der, indirect),
    signedAttributes,
    attributes,
    signature: der.subarray(signer[5].contentAt, signer[5].end),
    certificates,
  };
}

/** The children of `parent`, whose tags (two hex digits, space-separated) must match `tags`. */
function shaped(der: Uint8Array, parent: DerElement, tags: RegExp): DerElement[] {
  const out = derChildren(der, parent);
  const seen = out?.map((c) => c.tag.toString(16).padStart(2, "0")).join(" ");
  if (out === undefined || seen === undefined || !tags.test(seen)) {
    throw malformed(
      `element at ${parent.at} (tag 0x${parent.tag.toString(16)}) holds ${seen ?? "malformed DER"}`,
    );
  }
  return out;
}

function malformed(what: string, cause?: unknown): AuthenticodeError {
  return new AuthenticodeError("bad-signature", what, cause === undefined ? undefined : { cause });
}
