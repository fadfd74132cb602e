/**
 * A NoCloud config drive for the QEMU tests, made the way an operator would
 * (`mkfs.vfat -n CIDATA` and mtools' `mcopy`, no root, no mount): a small
 * FAT volume labelled `CIDATA` holding `user-data` (config/keeper/config_sources.ts,
 * item 5; docs/install.md).
 */
import { createHash } from "node:crypto";
import { run } from "../imager/mod.ts";

/** Writes a FAT volume of `sizeMiB` at `path`, labelled CIDATA, with `userData` as `user-data`. */
export async function writeCidataVolume(
  path: string,
  userData: string,
  sizeMiB = 4,
): Promise<void> {
  await Deno.remove(path).catch(() => {});
  {
    using f = await Deno.open(path, { write: true, create: true, truncate: true });
    await f.truncate(sizeMiB << 20);
  }
  await run("mkfs.vfat", ["-n", "CIDATA", path]);
  const file = `${path}.user-data`;
  await Deno.writeTextFile(file, userData);
  try {
    await run("mcopy", ["-i", path, file, "::/user-data"], { env: { MTOOLS_SKIP_CHECK: "1" } });
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** SHA-256 of `length` bytes of `path` at `offset` (an ESP inside a disk image). */
export async function sha256Range(path: string, offset: number, length: number): Promise<string> {
  const h = createHash("sha256");
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(4 << 20);
  for (let left = length; left > 0;) {
    const n = await f.read(buf.subarray(0, Math.min(buf.length, left)));
    if (n === null) throw new RangeError(`${path} ends before byte ${offset + length}`);
    h.update(buf.subarray(0, n));
    left -= n;
  }
  return h.digest("hex");
}
