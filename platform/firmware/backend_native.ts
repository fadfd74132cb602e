/**
 * NativeFirmwareBackend: reads sysfs and securityfs with plain file reads, under a root that
 * tests point at a temporary directory.
 * @module
 */
import { type FirmwareBackend, FirmwareReadError, PCR_COUNT, type TpmFacts } from "./backend.ts";

/** Bytes efivarfs puts before a variable's data: its attributes, a little-endian u32. */
export const EFIVAR_ATTRIBUTE_BYTES = 4;
/** The lockdown file is one short line; more is not the kernel's. */
const MAX_SMALL_FILE = 4096;

/** The paths read, relative to the root. */
export const FIRMWARE_PATHS = {
  efi: "sys/firmware/efi",
  efivars: "sys/firmware/efi/efivars",
  lockdown: "sys/kernel/security/lockdown",
  tpm: "sys/class/tpm/tpm0",
} as const;

/** Reads the running kernel's view (or one laid out under `root`). */
export class NativeFirmwareBackend implements FirmwareBackend {
  readonly #root: string;

  /** @param root the directory holding `sys/`. @default "/" */
  constructor(root = "/") {
    this.#root = root.endsWith("/") ? root : `${root}/`;
  }

  async efi(): Promise<boolean> {
    return (await statOrUndefined(this.#root + FIRMWARE_PATHS.efi))?.isDirectory ?? false;
  }

  async efiVariable(name: string, guid: string, maxBytes: number) {
    const path = `${this.#root}${FIRMWARE_PATHS.efivars}/${name}-${guid}`;
    const bytes = await readBounded(path, maxBytes + EFIVAR_ATTRIBUTE_BYTES);
    return bytes?.slice(Math.min(EFIVAR_ATTRIBUTE_BYTES, bytes.length));
  }

  async lockdown(): Promise<string | undefined> {
    const bytes = await readBounded(this.#root + FIRMWARE_PATHS.lockdown, MAX_SMALL_FILE);
    return bytes && new TextDecoder().decode(bytes);
  }

  async tpm(): Promise<TpmFacts> {
    const dir = this.#root + FIRMWARE_PATHS.tpm;
    const present = (await statOrUndefined(dir)) !== undefined;
    const pcrSha256: (string | undefined)[] = [];
    for (let i = 0; i < PCR_COUNT; i++) {
      const bytes = present
        ? await readBounded(`${dir}/pcr-sha256/${i}`, MAX_SMALL_FILE).catch(() => undefined)
        : undefined;
      pcrSha256.push(bytes && new TextDecoder().decode(bytes).trim().toLowerCase());
    }
    return { present, pcrSha256 };
  }
}

async function statOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new FirmwareReadError(path, (e as Error).message, { cause: e });
  }
}

/**
 * A file's bytes, read up to `maxBytes` + 1 so a larger one is refused without reading it all
 * (efivarfs and sysfs sizes from stat are not trusted); `undefined` when it does not exist.
 * @throws FirmwareReadError past `maxBytes` or on any other error.
 */
async function readBounded(path: string, maxBytes: number): Promise<Uint8Array | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new FirmwareReadError(path, (e as Error).message, { cause: e });
  }
  try {
    const buf = new Uint8Array(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    if (n > maxBytes) throw new FirmwareReadError(path, `larger than ${maxBytes} bytes`);
    return buf.slice(0, n);
  } catch (e) {
    if (e instanceof FirmwareReadError) throw e;
    throw new FirmwareReadError(path, (e as Error).message, { cause: e });
  } finally {
    file.close();
  }
}
