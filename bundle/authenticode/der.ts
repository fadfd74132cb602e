/**
 * DER element headers (tag, length) read without recursion: the verifier needs
 * some elements' exact bytes as they were signed (the signed attributes, the
 * certificates, the content octets Authenticode's messageDigest covers), which a
 * parse-and-re-encode could change. Bounded: lengths are checked against the
 * input and a walk lists at most a fixed number of children.
 * @module
 */

/** One element: its first tag byte and where it and its content lie. */
export interface DerElement {
  tag: number;
  /** Offset of the tag. */
  at: number;
  /** Offset of the content octets. */
  contentAt: number;
  /** Offset just past the element. */
  end: number;
}

/** The most children {@link derChildren} lists (a CMS SignedData has 6). */
export const MAX_DER_CHILDREN = 64;

/**
 * The element at `at` in `bytes`, or undefined when it is not a definite-length
 * element with a one-byte tag ending by `limit`.
 */
export function derElement(
  bytes: Uint8Array,
  at = 0,
  limit = bytes.length,
): DerElement | undefined {
  if (at + 2 > limit) return undefined;
  const tag = bytes[at];
  if ((tag & 0x1f) === 0x1f) return undefined; // multi-byte tags: none in Authenticode
  const first = bytes[at + 1];
  let contentAt = at + 2;
  let length = first;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n === 0 || n > 4 || at + 2 + n > limit) return undefined; // indefinite or huge
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + bytes[at + 2 + i];
    contentAt += n;
  }
  const end = contentAt + length;
  return end <= limit ? { tag, at, contentAt, end } : undefined;
}

/**
 * The children of a constructed element, in order, or undefined when they do
 * not tile its content exactly or number more than {@link MAX_DER_CHILDREN}.
 */
export function derChildren(bytes: Uint8Array, parent: DerElement): DerElement[] | undefined {
  const out: DerElement[] = [];
  for (let at = parent.contentAt; at < parent.end;) {
    const child = derElement(bytes, at, parent.end);
    if (child === undefined || out.length === MAX_DER_CHILDREN) return undefined;
    out.push(child);
    at = child.end;
  }
  return out;
}

/** The bytes of `e` (tag, length and content). */
export function derBytes(bytes: Uint8Array, e: DerElement): Uint8Array {
  return bytes.subarray(e.at, e.end);
}
