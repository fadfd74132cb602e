/**
 * Reads what a foreign-architecture ELF64 file needs at run time: its
 * machine, its program interpreter (PT_INTERP) and its DT_NEEDED libraries.
 * `ldd` runs the binary's own loader, so it cannot list the libraries of an
 * aarch64 binary on an x86_64 build host; this reads the headers instead.
 */

/** ELF `e_machine` values the imager builds for. */
export const ELF_MACHINE = { x86_64: 62, aarch64: 183 } as const;

/** A file that is not a little-endian ELF64 file. */
export class ElfError extends Error {
  override name = "ElfError";
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

/** The run-time needs of one ELF file. */
export interface ElfInfo {
  /** `e_machine` (62 x86_64, 183 aarch64). */
  machine: number;
  /** The program interpreter, e.g. /lib/ld-linux-aarch64.so.1; absent for a library or static binary. */
  interpreter?: string;
  /** DT_NEEDED sonames, in file order. */
  needed: string[];
}

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;

/**
 * Parse `bytes` as a little-endian ELF64 file.
 * @param path used only in error messages.
 * @throws ElfError when the bytes are not a little-endian ELF64 file.
 */
export function parseElf(bytes: Uint8Array, path = "<elf>"): ElfInfo {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 64 || v.getUint32(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) {
    throw new ElfError(`"${path}" is not a little-endian ELF64 file`, path);
  }
  const machine = v.getUint16(0x12, true);
  const phoff = Number(v.getBigUint64(0x20, true));
  const phentsize = v.getUint16(0x36, true);
  const phnum = v.getUint16(0x38, true);
  const segments = Array.from({ length: phnum }, (_, i) => {
    const o = phoff + i * phentsize;
    return {
      type: v.getUint32(o, true),
      offset: Number(v.getBigUint64(o + 0x08, true)),
      vaddr: Number(v.getBigUint64(o + 0x10, true)),
      filesz: Number(v.getBigUint64(o + 0x20, true)),
    };
  });
  const cstr = (at: number) => {
    let end = at;
    while (end < bytes.length && bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(at, end));
  };
  const interp = segments.find((s) => s.type === PT_INTERP);
  const dynamic = segments.find((s) => s.type === PT_DYNAMIC);
  const info: ElfInfo = { machine, needed: [] };
  if (interp) info.interpreter = cstr(interp.offset);
  if (!dynamic) return info;
  const entries: Array<[bigint, bigint]> = [];
  for (let o = dynamic.offset; o + 16 <= dynamic.offset + dynamic.filesz; o += 16) {
    const tag = v.getBigInt64(o, true);
    if (tag === 0n) break;
    entries.push([tag, v.getBigUint64(o + 8, true)]);
  }
  const strtabAddr = Number(entries.find(([t]) => t === DT_STRTAB)?.[1] ?? -1n);
  const load = segments.find((s) =>
    s.type === PT_LOAD && strtabAddr >= s.vaddr && strtabAddr < s.vaddr + s.filesz
  );
  if (!load) throw new ElfError(`"${path}" has a dynamic section but no mapped DT_STRTAB`, path);
  const strtab = strtabAddr - load.vaddr + load.offset;
  for (const [tag, value] of entries) {
    if (tag === DT_NEEDED) info.needed.push(cstr(strtab + Number(value)));
  }
  return info;
}

/** Parse the ELF file at `path`. */
export async function readElf(path: string): Promise<ElfInfo> {
  return parseElf(await Deno.readFile(path), path);
}
