/**
 * The file side of the image's GPT: lays down the writes that
 * platform/block's {@link encodeGpt} computes at their offsets in an image
 * file, and reads the table back strictly with {@link verifyGpt}. The on-disk
 * format itself lives only in platform/block/gpt.ts, shared with the disk
 * provisioner, so the imager and machined cannot drift apart.
 */
import { type GptVerified, type GptWrite, verifyGpt } from "../platform/block/mod.ts";

/** Logical block size the imager lays its disk out for. */
export const SECTOR_SIZE = 512;

/**
 * Write `writes` (from `encodeGpt`) into the existing file at `path`, which
 * must already have the disk's final size (the backup copy goes at its end).
 */
export async function writeGptToImage(path: string, writes: readonly GptWrite[]): Promise<void> {
  using f = await Deno.open(path, { write: true });
  for (const w of writes) {
    await f.seek(w.offset, Deno.SeekMode.Start);
    for (let off = 0; off < w.data.length;) off += await f.write(w.data.subarray(off));
  }
}

/**
 * Read and verify the GPT of the image file at `path`: protective MBR, both
 * headers and arrays with their CRCs, the backup header in the last sector,
 * and both copies agreeing.
 * @throws GptVerifyError on any mismatch; a RangeError on a file too small for a GPT.
 */
export async function readImageGpt(path: string): Promise<GptVerified> {
  using f = await Deno.open(path, { read: true });
  const size = (await f.stat()).size;
  const read = async (offset: number, length: number) => {
    const buf = new Uint8Array(length);
    await f.seek(offset, Deno.SeekMode.Start);
    for (let off = 0; off < length;) {
      const n = await f.read(buf.subarray(off));
      if (n === null) throw new RangeError(`Short read at byte ${offset + off} of "${path}"`);
      off += n;
    }
    return buf;
  };
  return await verifyGpt(read, size, SECTOR_SIZE);
}
