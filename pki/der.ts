/**
 * A small DER writer: just the types an X.509 leaf certificate is made of.
 * It exists because @peculiar/x509's generator builds every field through
 * decorated ASN.1 schema classes, which under V8's interpreter (machined runs
 * in lite mode) and QEMU's TCG cost about 0.2 s per certificate on the boot
 * path, three times per boot (issue 27). Writing the bytes directly costs a
 * few milliseconds; leaf_certificate_test.ts pins the result byte for byte
 * against the library's own encoding.
 *
 * Every function is pure and returns a complete TLV.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** Encoded bytes over a plain ArrayBuffer (what WebCrypto and the x509 library take). */
export type Der = Uint8Array<ArrayBuffer>;

/** DER tags used here (universal class unless noted). */
export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
} as const;

/** Concatenates byte arrays, into a buffer of their own. */
export function concatBytes(parts: readonly Uint8Array[]): Der {
  return new Uint8Array(Buffer.concat(parts));
}

/** One TLV: `tag`, the definite length (short or long form), then `content`. */
export function tlv(tag: number, content: Uint8Array): Der {
  const n = content.length;
  let head: number[];
  if (n < 0x80) head = [tag, n];
  else {
    const len: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) len.unshift(v & 0xff);
    head = [tag, 0x80 | len.length, ...len];
  }
  return concatBytes([Uint8Array.from(head), content]);
}

/** A SEQUENCE of already encoded elements. */
export function sequence(elements: readonly Uint8Array[]): Der {
  return tlv(TAG.sequence, concatBytes(elements));
}

/** A context-specific constructed tag, `[n] EXPLICIT`. */
export function explicit(n: number, inner: Uint8Array): Der {
  return tlv(0xa0 | n, inner);
}

/** A context-specific primitive tag, `[n] IMPLICIT` over primitive content. */
export function implicit(n: number, content: Uint8Array): Der {
  return tlv(0x80 | n, content);
}

/** BOOLEAN. */
export function boolean(value: boolean): Der {
  return tlv(TAG.boolean, Uint8Array.of(value ? 0xff : 0x00));
}

/**
 * A non-negative INTEGER from its big-endian magnitude: leading zero octets
 * dropped, one zero octet added when the top bit is set.
 */
export function unsignedInteger(magnitude: Uint8Array): Der {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = magnitude.subarray(start);
  const content = bytes.length === 0
    ? Uint8Array.of(0)
    : bytes[0] & 0x80
    ? concatBytes([Uint8Array.of(0), bytes])
    : bytes;
  return tlv(TAG.integer, content);
}

/** A small non-negative INTEGER. */
export function smallInteger(value: number): Der {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff) {
    throw new RangeError(`smallInteger: ${value} is not an integer in 0..65535`);
  }
  return unsignedInteger(Uint8Array.of(value >> 8, value & 0xff));
}

/**
 * An OBJECT IDENTIFIER from its dotted form.
 * @throws {RangeError} when the text is not a valid OID
 */
export function oid(dotted: string): Der {
  const arcs = dotted.split(".").map((a) => (/^(0|[1-9]\d*)$/.test(a) ? Number(a) : NaN));
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a)) || arcs[0] > 2) {
    throw new RangeError(`oid: "${dotted}" is not an object identifier`);
  }
  const out: number[] = [];
  for (const arc of [arcs[0] * 40 + arcs[1], ...arcs.slice(2)]) {
    const base128: number[] = [];
    for (let v = arc;; v = Math.floor(v / 128)) {
      base128.unshift((v % 128) | (base128.length ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...base128);
  }
  return tlv(TAG.oid, Uint8Array.from(out));
}

/** OCTET STRING. */
export function octetString(content: Uint8Array): Der {
  return tlv(TAG.octetString, content);
}

/** BIT STRING of whole octets (no unused bits). */
export function bitString(content: Uint8Array): Der {
  return tlv(TAG.bitString, concatBytes([Uint8Array.of(0), content]));
}

/** A string type's TLV over the text's UTF-8 bytes (the times here are ASCII). */
export function text(tag: number, value: string): Der {
  return tlv(tag, new TextEncoder().encode(value));
}

/**
 * RFC 5280's Time: UTCTime through 2049, GeneralizedTime from 2050, whole
 * seconds in UTC (milliseconds are dropped, as certificates carry none).
 */
export function time(at: Date): Der {
  const iso = at.toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "") + "Z";
  const year = at.getUTCFullYear();
  if (year < 1950 || year > 9999) throw new RangeError(`time: year ${year} out of range`);
  return year < 2050 ? text(TAG.utcTime, digits.slice(2)) : text(TAG.generalizedTime, digits);
}

/**
 * WebCrypto's ECDSA signature (IEEE P1363: r then s, each `size` octets) as
 * X.509's Ecdsa-Sig-Value, `SEQUENCE { r INTEGER, s INTEGER }`.
 * @throws {RangeError} when the length is odd or zero
 */
export function ecdsaSignatureToDer(p1363: Uint8Array): Der {
  if (p1363.length === 0 || p1363.length % 2 !== 0) {
    throw new RangeError(`ecdsaSignatureToDer: ${p1363.length} octets is not r || s`);
  }
  const half = p1363.length / 2;
  return sequence([
    unsignedInteger(p1363.subarray(0, half)),
    unsignedInteger(p1363.subarray(half)),
  ]);
}

/**
 * Bytes from hex octets (a serial, a key identifier as the x509 library prints it).
 * @throws {RangeError} when the text is not whole hex octets
 */
export function hexBytes(hex: string): Der {
  if (!/^([0-9a-fA-F]{2})+$/.test(hex)) throw new RangeError(`"${hex}" is not hex octets`);
  return Uint8Array.from(hex.match(/../g)!, (b) => parseInt(b, 16));
}
