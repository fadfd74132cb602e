/**
 * Reads the `.modinfo` section of a kernel module (an ELF64 relocatable
 * file). Debian's kernel package ships no modules.dep (depmod writes it at
 * install time), so the imager derives the dependency graph from each
 * module's own `depends=` and `name=` strings instead of needing kmod.
 */

/** The keys of one module's `.modinfo`; repeated keys keep every value. */
export type ModInfo = Map<string, string[]>;

/** A file that is not a little-endian ELF64 module, or has no `.modinfo`. */
export class ModInfoError extends Error {
  override name = "ModInfoError";
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

/**
 * Parse the `.modinfo` section of the module bytes.
 * @param path used only in error messages.
 * @throws ModInfoError when the bytes are not an ELF64 LE file with `.modinfo`.
 */
export function parseModInfo(bytes: Uint8Array, path = "<module>"): ModInfo {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) {
    throw new ModInfoError(`"${path}" is not a little-endian ELF64 file`, path);
  }
  const shoff = Number(v.getBigUint64(0x28, true));
  const shentsize = v.getUint16(0x3a, true);
  const shnum = v.getUint16(0x3c, true);
  const shstrndx = v.getUint16(0x3e, true);
  const section = (i: number) => {
    const o = shoff + i * shentsize;
    return {
      name: v.getUint32(o, true),
      offset: Number(v.getBigUint64(o + 0x18, true)),
      size: Number(v.getBigUint64(o + 0x20, true)),
    };
  };
  const names = section(shstrndx);
  const text = new TextDecoder();
  const cstr = (at: number) => {
    let end = at;
    while (bytes[end] !== 0) end++;
    return text.decode(bytes.subarray(at, end));
  };
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (cstr(names.offset + s.name) !== ".modinfo") continue;
    const info: ModInfo = new Map();
    for (const kv of text.decode(bytes.subarray(s.offset, s.offset + s.size)).split("\0")) {
      const eq = kv.indexOf("=");
      if (eq <= 0) continue;
      const key = kv.slice(0, eq);
      info.set(key, [...(info.get(key) ?? []), kv.slice(eq + 1)]);
    }
    return info;
  }
  throw new ModInfoError(`"${path}" has no .modinfo section`, path);
}
