/**
 * An Authenticode signature's PKCS#7 SignedData, taken apart: the
 * SpcIndirectDataContent it signs (the image's hash), its one SignerInfo, the
 * signed attributes as the signer signed them (re-tagged as a SET) and the
 * certificates it carries. Typed fields come from @peculiar/asn1-cms; the bytes
 * a signature covers are cut from the input as they are, never re-encoded.
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
    const encap = signedData.encapContentInfo;
    if (encap.eContentType !== SPC_INDIRECT_DATA || encap.eContent?.any === undefined) {
      throw new AuthenticodeError(
        "unsupported",
        `signed content ${encap.eContentType} is not SpcIndirectDataContent`,
      );
    }
    indirect = AsnConvert.parse(encap.eContent.any, SpcIndirectDataContent);
  } catch (e) {
    if (e instanceof AuthenticodeError) throw e;
    throw malformed(`cannot parse the PKCS#7 SignedData: ${(e as Error).message}`, e);
  }
  if (signedData.signerInfos.length !== 1) {
    throw new AuthenticodeError(
      "unsupported",
      `${signedData.signerInfos.length} signers (Authenticode has exactly one)`,
    );
  }
  const content = new Uint8Array(signedData.encapContentInfo.eContent!.any!);
  const outer = derElement(content);
  if (outer === undefined || outer.end !== content.length) {
    throw malformed("SpcIndirectDataContent is not one DER element");
  }
  return {
    indirectDataContent: content.subarray(outer.contentAt),
    imageDigestAlgorithm: indirect.messageDigest.digestAlgorithm.algorithm,
    imageDigest: new Uint8Array(indirect.messageDigest.digest.buffer),
    signerInfo: signedData.signerInfos[0],
    signedAttributes: raw.signedAttributes,
    certificates: raw.certificates,
  };
}

/** The bytes cut from the input: the DER itself, the signed attributes, the certificates. */
function rawParts(blob: Uint8Array) {
  const info = derElement(blob);
  if (info === undefined || info.tag !== 0x30) throw malformed("not a DER SEQUENCE");
  if (blob.subarray(info.end).some((b) => b !== 0)) {
    throw malformed(`${blob.length - info.end} bytes that are not padding follow the PKCS#7 blob`);
  }
  const der = blob.subarray(0, info.end);
  const [, explicit] = children(der, info, 2);
  const signedData = derElement(der, explicit.contentAt, explicit.end);
  if (signedData === undefined || signedData.tag !== 0x30) throw malformed("no SignedData");
  const parts = children(der, signedData);
  const certs = parts.find((p) => p.tag === 0xa0);
  const signerInfos = parts[parts.length - 1];
  if (signerInfos.tag !== 0x31) throw malformed("SignedData does not end with its SignerInfos");
  const signers = children(der, signerInfos);
  if (signers.length !== 1) {
    throw new AuthenticodeError("unsupported", `${signers.length} signers (Authenticode has one)`);
  }
  const attributes = children(der, signers[0]).find((p) => p.tag === 0xa0);
  if (attributes === undefined) {
    throw new AuthenticodeError("unsupported", "the SignerInfo has no signed attributes");
  }
  const signedAttributes = derBytes(der, attributes).slice();
  signedAttributes[0] = 0x31; // [0] IMPLICIT SET OF -> SET OF, as signed
  const certificates = certs === undefined ? [] : children(der, certs).map((c) => derBytes(der, c));
  return { der, signedAttributes, certificates };
}

function children(der: Uint8Array, parent: DerElement, atLeast = 1): DerElement[] {
  const out = derChildren(der, parent);
  if (out === undefined || out.length < atLeast) {
    throw malformed(`element at ${parent.at} (tag 0x${parent.tag.toString(16)}) is malformed`);
  }
  return out;
}

function malformed(what: string, cause?: unknown): AuthenticodeError {
  return new AuthenticodeError("bad-signature", what, cause === undefined ? undefined : { cause });
}
