/**
 * A NoCloud config drive for the QEMU tests, made the way an operator would
 * (`mkfs.vfat -n CIDATA` and mtools' `mcopy`, no root, no mount): a small
 * FAT volume labelled `CIDATA` holding `user-data` (node/config_sources.ts,
 * item 5; docs/install.md).
 */
import { run } from "../imager/run.ts";

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
