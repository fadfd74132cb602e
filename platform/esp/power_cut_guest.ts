/**
 * The guest half of e2e/esp_write_cut_test.ts: runs inside a small QEMU VM
 * (Deno in a busybox initramfs) with three vfat disks mounted as the ESP is
 * (`dirsync`), and leaves on the first two the state a power cut halfway
 * through an upgrade's biggest file would find, with the kernel's flusher at
 * its worst: the block device's dirty buffers (the FAT) written, the file's
 * inode (its directory entry) not.
 *   - `/a` (control): the file written by plain writes, as before
 *     preallocation;
 *   - `/b`: the file written by {@link DirEspFiles.writeFile}.
 * Each prints `CUT a` / `CUT b` once its disk holds that state, then waits
 * to be killed. Before that, `/c` times both ways of writing the whole file
 * (one JSON line, `ESPWRITE {...}`), each fsynced at the end.
 *
 * Run as `deno run -A power_cut_guest.js` after the test's /init mounted
 * the disks; the test bundles this file with `deno bundle`.
 * @module
 */
import { DirEspFiles } from "./dir_files.ts";

/** The file's size: a third of a root image, half of it written before the cut. */
export const CUT_FILE_BYTES = 48 << 20;
const CHUNK = 1 << 20;

function chunk(i: number): Uint8Array {
  return new Uint8Array(CHUNK).fill(i & 0xff);
}

/** `count` chunks, then `atEnd` awaited before the iteration ends. */
async function* chunks(count: number, atEnd?: () => Promise<void>): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < count; i++) yield chunk(i);
  await atEnd?.();
}

/** fsync of the whole block device: what the flusher does to the FAT's buffers, not the inode. */
async function flushDevice(device: string): Promise<void> {
  const f = await Deno.open(device, { read: true });
  try {
    await f.sync();
  } finally {
    f.close();
  }
}

/** Plain writes without fsync (what writeFile did before preallocation). */
async function plainHalf(path: string): Promise<void> {
  const f = await Deno.open(path, { write: true, create: true, truncate: true });
  for await (const c of chunks(CUT_FILE_BYTES / CHUNK / 2)) await f.write(c);
  // Left open, like a write still under way.
}

async function timedWrites(): Promise<void> {
  const n = CUT_FILE_BYTES / CHUNK;
  let t = performance.now();
  const f = await Deno.open("/c/plain.new", { write: true, create: true, truncate: true });
  for await (const c of chunks(n)) await f.write(c);
  await f.sync();
  f.close();
  const plainS = (performance.now() - t) / 1000;
  t = performance.now();
  await new DirEspFiles("/c").writeFile("/prealloc.new", {
    size: CUT_FILE_BYTES,
    chunks: chunks(n),
  });
  const preallocatedS = (performance.now() - t) / 1000;
  console.log(`ESPWRITE ${JSON.stringify({ bytes: CUT_FILE_BYTES, plainS, preallocatedS })}`);
}

const forever = () => new Promise<void>((r) => setTimeout(r, 2 ** 31 - 1));

if (import.meta.main) {
  await timedWrites();
  await plainHalf("/a/root.img.new");
  await flushDevice("/dev/vda");
  console.log("CUT a");
  const half = CUT_FILE_BYTES / CHUNK / 2;
  await new DirEspFiles("/b").writeFile("/root.img.new", {
    size: CUT_FILE_BYTES,
    chunks: chunks(half, async () => {
      await flushDevice("/dev/vdb");
      console.log("CUT b");
      await forever();
    }),
  });
}
