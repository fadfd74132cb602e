/**
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) as used by GPT
 * headers and entry arrays. zlib's, through node:zlib (already loaded for the
 * API): a table-driven loop in JS took 0.7 ms per 16 KiB entry array under V8's
 * lite mode on a laptop, and 79 ms of boot's JS thread under TCG (issue 27's
 * guest profile), where discovery reads every disk's primary and backup arrays.
 * @module
 */
import { crc32 as zlibCrc32 } from "node:zlib";

/** CRC-32 of `data`, as an unsigned 32-bit number. */
export function crc32(data: Uint8Array): number {
  return zlibCrc32(data) >>> 0;
}
