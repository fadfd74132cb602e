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
 * It prints `CUT b`, then `CUT a`, as each disk comes to hold that state,
 * then waits to be killed. Before that, `/c` times both ways of writing the
 * whole file, twice each in alternating order (one JSON line, `ESPWRITE
 * {...}`), each fsynced at the end.
 *
 * Run as `deno run -A power_cut_guest.js` after the test's /init mounted
 * the disks; the test bundles this file with `deno bundle`. It lives in this
 * room because it drives dir_files.ts itself, without the native layer the
 * room's mod.ts brings in.
 * @module
 */
import { DirEspFiles } from "./dir_files.ts";

/** The file's size: a third of a root image, half of it written before the cut. */
const CUT_FILE_BYTES = 48 << 20;
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

/** Seconds to write the whole file to `/c` and fsync it, plainly or through writeFile. */
async function timedWrite(preallocated: boolean): Promise<number> {
  const n = CUT_FILE_BYTES / CHUNK;
  const t = performance.now();
  if (preallocated) {
    await new DirEspFiles("/c").writeFile("/f.new", { size: CUT_FILE_BYTES, chunks: chunks(n) });
  } else {
    const f = await Deno.open("/c/f.new", { write: true, create: true, truncate: true });
    for await (const c of chunks(n)) await f.write(c);
    await f.sync();
    f.close();
  }
  const s = (performance.now() - t) / 1000;
  await Deno.remove("/c/f.new");
  return s;
}

/** Both ways twice, in alternating order (neither always first on a cold disk). */
async function timedWrites(): Promise<void> {
  const plainS: number[] = [];
  const preallocatedS: number[] = [];
  for (const first of [false, true, true, false]) {
    (first ? preallocatedS : plainS).push(await timedWrite(first));
  }
  console.log(`ESPWRITE ${JSON.stringify({ bytes: CUT_FILE_BYTES, plainS, preallocatedS })}`);
}

const forever = () => new Promise<void>((r) => setTimeout(r, 2 ** 31 - 1));

if (import.meta.main) {
  await timedWrites();
  // /b first (it waits, cut, inside writeFile), then the control, so that the
  // VM is killed right after the control's cut: its dirty inode has no time to
  // reach the disk on its own.
  let cutB!: () => void;
  const bCut = new Promise<void>((r) => (cutB = r));
  const half = CUT_FILE_BYTES / CHUNK / 2;
  void new DirEspFiles("/b").writeFile("/root.img.new", {
    size: CUT_FILE_BYTES,
    chunks: chunks(half, async () => {
      await flushDevice("/dev/vdb");
      console.log("CUT b");
      cutB();
      await forever();
    }),
  });
  await bCut;
  await plainHalf("/a/root.img.new");
  await flushDevice("/dev/vda");
  console.log("CUT a");
  await forever();
}
