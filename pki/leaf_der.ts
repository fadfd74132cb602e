/**
 * The DER of a leaf certificate's parts, written directly (pki/der.ts says
 * why): the TBSCertificate with its extensions, and the signed certificate.
 * The field order and encodings are those of @peculiar/x509's generator,
 * which leaf_certificate_test.ts checks byte for byte; a SAN entry this
 * writer does not know is left to the library.
 *
 * @module
 */
import { parseIp } from "../ip/mod.ts";
import { x509 } from "./x509_provider.ts";
import {
  bitString,
  boolean,
  type Der,
  ecdsaSignatureToDer,
  explicit,
  hexBytes,
  implicit,
  octetString,
  oid,
  sequence,
  smallInteger,
  TAG,
  time,
  unsignedInteger,
} from "./der.ts";

/** The OIDs a leaf is made of. */
export const LEAF_OIDS = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  extendedKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
} as const;

/** What {@link tbsCertificate} encodes; names are DER already. */
export interface TbsFields {
  /** Hex of the serial's magnitude (pki/keyed_certificate.ts's randomSerialNumber). */
  serialHex: string;
  issuer: Uint8Array;
  subject: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** The subject key's SubjectPublicKeyInfo (WebCrypto's `spki` export). */
  spki: Uint8Array;
  /** Complete Extension TLVs, in order. */
  extensions: readonly Uint8Array[];
}

/** The TBSCertificate of an X.509 v3 certificate signed with ECDSA-SHA256. */
export function tbsCertificate(f: TbsFields): Der {
  return sequence([
    explicit(0, smallInteger(2)),
    unsignedInteger(hexBytes(f.serialHex)),
    sequence([oid(LEAF_OIDS.ecdsaWithSha256)]),
    f.issuer,
    sequence([time(f.notBefore), time(f.notAfter)]),
    f.subject,
    f.spki,
    explicit(3, sequence(f.extensions)),
  ]);
}

/** The Certificate: the TBS, its algorithm, and WebCrypto's ECDSA signature over it. */
export function signedCertificate(tbs: Uint8Array, p1363Signature: Uint8Array): Der {
  return sequence([
    tbs,
    sequence([oid(LEAF_OIDS.ecdsaWithSha256)]),
    bitString(ecdsaSignatureToDer(p1363Signature)),
  ]);
}

/** One Extension: its OID, `critical` only when true (DER drops the default), its value. */
export function extension(id: string, critical: boolean, value: Uint8Array): Der {
  return sequence([oid(id), ...(critical ? [boolean(true)] : []), octetString(value)]);
}

/** BasicConstraints CA:false, critical. */
export function endEntityConstraints(): Der {
  return extension(LEAF_OIDS.basicConstraints, true, sequence([]));
}

/** KeyUsage digitalSignature alone, critical. */
export function digitalSignatureKeyUsage(): Der {
  // One named bit (bit 0): seven unused bits in the one octet.
  return extension(LEAF_OIDS.keyUsage, true, Uint8Array.of(TAG.bitString, 2, 7, 0x80));
}

/** SubjectKeyIdentifier, not critical. */
export function subjectKeyIdentifier(keyId: Uint8Array): Der {
  return extension(LEAF_OIDS.subjectKeyIdentifier, false, octetString(keyId));
}

/** AuthorityKeyIdentifier carrying only the key identifier, not critical. */
export function authorityKeyIdentifier(keyId: Uint8Array): Der {
  return extension(LEAF_OIDS.authorityKeyIdentifier, false, sequence([implicit(0, keyId)]));
}

/** ExtendedKeyUsage over the given OIDs, not critical. */
export function extendedKeyUsage(oids: readonly string[]): Der {
  return extension(LEAF_OIDS.extendedKeyUsage, false, sequence(oids.map(oid)));
}

/**
 * SubjectAltName, not critical: DNS names and IP addresses written here; a
 * list with any other kind of entry (or an address that does not parse) is
 * encoded by the library, so nothing is lost or guessed.
 */
export function subjectAltName(names: x509.JsonGeneralNames): Der {
  const entries: Uint8Array[] = [];
  for (const n of names) {
    const ip = n.type === "ip" ? parseIp(n.value)?.bytes : undefined;
    if (n.type === "dns" && /^[\x20-\x7e]*$/.test(n.value)) {
      entries.push(implicit(2, new TextEncoder().encode(n.value)));
    } else if (ip) entries.push(implicit(7, ip));
    else return new Uint8Array(new x509.SubjectAlternativeNameExtension(names, false).rawData);
  }
  return extension(LEAF_OIDS.subjectAltName, false, sequence(entries));
}

/** A subject or issuer Name's DER, from the library's JSON form (small and cheap). */
export function nameDer(name: x509.JsonName): Der {
  return new Uint8Array(new x509.Name(name).toArrayBuffer());
}
