/**
 * The `ldd` of a foreign-architecture image: the program interpreter and the
 * transitive DT_NEEDED closure of a binary, found in a sysroot (a directory
 * holding the target architecture's Debian packages unpacked, see
 * ../arch/foreign_root.ts) along the default search path of Debian's loader.
 */
import { ElfError, readElf } from "./elf.ts";

/** A library the binary needs that is not in the sysroot. */
export class MissingLibraryError extends Error {
  override name = "MissingLibraryError";
  constructor(readonly soname: string, readonly neededBy: string, readonly sysroot: string) {
    super(
      `"${soname}" (needed by ${neededBy}) is not in ${sysroot}: add its Debian package to ` +
        "the architecture's package list in imager/arch/profiles.ts",
    );
  }
}

/**
 * The interpreter and libraries `binary` (a host path) needs, as paths inside
 * the sysroot (absolute, e.g. `/lib/aarch64-linux-gnu/libc.so.6`), sorted.
 * Empty for a static binary.
 * @param libDirs the loader's search path inside the sysroot, in order.
 * @param machine the ELF machine every file must have.
 * @throws MissingLibraryError, or ElfError for a file of another machine.
 */
export async function sysrootLibraries(
  binary: string,
  sysroot: string,
  libDirs: readonly string[],
  machine: number,
): Promise<string[]> {
  const found = new Set<string>();
  const seen = new Set<string>();
  const queue: Array<{ file: string; name: string }> = [{ file: binary, name: binary }];
  while (queue.length > 0) {
    const { file, name } = queue.shift()!;
    const elf = await readElf(file);
    if (elf.machine !== machine) {
      throw new ElfError(`"${name}" is ELF machine ${elf.machine}, expected ${machine}`, file);
    }
    if (elf.interpreter) {
      found.add(elf.interpreter);
      // libc needs the loader by soname: it is the interpreter, already shipped.
      seen.add(elf.interpreter.slice(elf.interpreter.lastIndexOf("/") + 1));
    }
    for (const soname of elf.needed) {
      if (seen.has(soname)) continue;
      seen.add(soname);
      const at = await locate(soname, sysroot, libDirs);
      if (!at) throw new MissingLibraryError(soname, name, sysroot);
      found.add(at);
      queue.push({ file: `${sysroot}${at}`, name: at });
    }
  }
  return [...found].sort();
}

async function locate(
  soname: string,
  sysroot: string,
  libDirs: readonly string[],
): Promise<string | undefined> {
  for (const dir of libDirs) {
    const path = `${dir}/${soname}`;
    if (await Deno.stat(`${sysroot}${path}`).then(() => true, () => false)) return path;
  }
  return undefined;
}
