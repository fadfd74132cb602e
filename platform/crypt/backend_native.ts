/**
 * NativeCryptBackend: Debian's `cryptsetup` run through the process backend.
 *
 * Keys never travel in argv or the environment. The process backend connects
 * a child's stdin to /dev/null (native-ops has no stdin pipe yet), so a key
 * is written to a 0600 file in a fresh 0700 directory under `keyDir` (a tmpfs
 * on the node: /run), named in argv by path only, and removed as soon as the
 * command exits (docs/decisions.md, "LUKS keys through a private tmpfs file").
 * @module
 */
import { type ProcessBackend, runTool, ToolError, type ToolRun } from "../process/mod.ts";
import {
  type CryptBackend,
  DEFAULT_PBKDF,
  type FormatOptions,
  KeyRejectedError,
  type LuksInfo,
  type LuksToken,
  NotLuksError,
  type Pbkdf,
} from "./backend.ts";
import { parseLuksDump } from "./luks_dump.ts";

/** PATH for cryptsetup; machined passes no environment of its own. */

/** LUKS2's default header (both metadata copies and the keyslot area): 16 MiB. */
const DEFAULT_HEADER_BYTES = 16 * 1024 * 1024;

/** cryptsetup's exit code for "no key available with this passphrase". */
const EXIT_NO_KEY = 2;
/** cryptsetup's exit code when the mapping name exists already (or the device is busy). */
const EXIT_EXISTS = 5;

/** cryptsetup exited unsuccessfully; argv holds paths, never keys. */
export class CryptsetupError extends ToolError {
  override name = "CryptsetupError";
}

/** Options of {@link NativeCryptBackend}. */
export interface NativeCryptOptions {
  process: ProcessBackend;
  /** Where key files live for the length of one command. @default "/run/machined/crypt" */
  keyDir?: string;
}

/** The real backend. */
export class NativeCryptBackend implements CryptBackend {
  readonly #process: ProcessBackend;
  readonly #keyDir: string;
  constructor(options: NativeCryptOptions) {
    this.#process = options.process;
    this.#keyDir = options.keyDir ?? "/run/machined/crypt";
  }

  #run(args: string[]): Promise<ToolRun> {
    return runTool(this.#process, ["cryptsetup", ...args]);
  }

  async #ok(args: string[]): Promise<string> {
    const r = await this.#run(args);
    if (r.exit.code !== 0) throw new CryptsetupError(["cryptsetup", ...args], r.exit, r.stderr);
    return r.stdout;
  }

  /** Run `fn` with each of `contents` in its own private file; always removes them. */
  async #withFiles<T>(contents: Uint8Array[], fn: (paths: string[]) => Promise<T>): Promise<T> {
    await Deno.mkdir(this.#keyDir, { recursive: true, mode: 0o700 });
    const dir = await Deno.makeTempDir({ dir: this.#keyDir, prefix: "k" });
    try {
      await Deno.chmod(dir, 0o700);
      const paths = contents.map((_, i) => `${dir}/${i}`);
      for (const [i, c] of contents.entries()) {
        await Deno.writeFile(paths[i], c, { mode: 0o600, createNew: true });
      }
      return await fn(paths);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }

  async isLuks(device: string): Promise<boolean> {
    const r = await this.#run(["isLuks", "--type", "luks2", device]);
    return r.exit.code === 0;
  }

  async dump(device: string): Promise<LuksInfo> {
    if (!(await this.isLuks(device))) throw new NotLuksError(device);
    return parseLuksDump(await this.#ok(["luksDump", "--dump-json-metadata", device]));
  }

  async format(device: string, key: Uint8Array, options: FormatOptions): Promise<void> {
    const args = [
      "luksFormat",
      "--batch-mode",
      "--type",
      "luks2",
      "--cipher",
      options.cipher ?? "aes-xts-plain64",
      "--sector-size",
      String(options.sectorSize ?? 4096),
      ...pbkdfArgs(options.pbkdf ?? DEFAULT_PBKDF),
      "--key-slot",
      String(options.slot),
      ...(options.label ? ["--label", options.label] : []),
    ]; // deno-fmt-ignore
    await this.#withFiles([key], ([k]) => this.#ok([...args, `--key-file=${k}`, device]));
  }

  testKey(device: string, key: Uint8Array, slot?: number): Promise<boolean> {
    const s = slot === undefined ? [] : ["--key-slot", String(slot)];
    return this.#withFiles([key], async ([k]) => {
      const args = [
        "open",
        "--test-passphrase",
        "--type",
        "luks2",
        ...s,
        `--key-file=${k}`,
        device,
      ];
      const r = await this.#run(args);
      if (r.exit.code === 0) return true;
      if (r.exit.code === EXIT_NO_KEY) return false;
      throw new CryptsetupError(["cryptsetup", ...args], r.exit, r.stderr);
    });
  }

  async open(
    device: string,
    name: string,
    key: Uint8Array,
    options: { allowDiscards?: boolean } = {},
  ): Promise<string> {
    const mapped = `/dev/mapper/${name}`;
    const discards = options.allowDiscards ? ["--allow-discards"] : [];
    await this.#withFiles([key], async ([k]) => {
      const args = ["open", "--type", "luks2", ...discards, `--key-file=${k}`, device, name];
      const r = await this.#run(args);
      if (r.exit.code === EXIT_NO_KEY) throw new KeyRejectedError(device, undefined);
      // Already mapped to this device (boot read STATE's config and its close failed): done.
      if (r.exit.code === EXIT_EXISTS && await this.#mapsTo(name, device)) return;
      if (r.exit.code !== 0) throw new CryptsetupError(["cryptsetup", ...args], r.exit, r.stderr);
    });
    return mapped;
  }

  /** Is the active mapping `name` over `device`? (`cryptsetup status`'s `device:` line.) */
  async #mapsTo(name: string, device: string): Promise<boolean> {
    const r = await this.#run(["status", name]);
    const found = /^\s*device:\s+(\S+)\s*$/m.exec(r.stdout)?.[1];
    if (r.exit.code !== 0 || !found) return false;
    const real = (p: string) => Deno.realPath(p).catch(() => p);
    return await real(found) === await real(device);
  }

  async close(name: string): Promise<void> {
    const r = await this.#run(["close", name]);
    // 4: "device ... is not active": already closed.
    if (r.exit.code !== 0 && r.exit.code !== 4) {
      throw new CryptsetupError(["cryptsetup", "close", name], r.exit, r.stderr);
    }
  }

  addKey(
    device: string,
    key: Uint8Array,
    newKey: Uint8Array,
    slot: number,
    pbkdf: Pbkdf = DEFAULT_PBKDF,
  ): Promise<void> {
    return this.#withFiles([key, newKey], async ([k, n]) => {
      const args = [
        "luksAddKey",
        "--batch-mode",
        ...pbkdfArgs(pbkdf),
        "--new-key-slot",
        String(slot),
        `--key-file=${k}`,
        device,
        n,
      ]; // deno-fmt-ignore
      const r = await this.#run(args);
      if (r.exit.code === EXIT_NO_KEY) throw new KeyRejectedError(device, undefined);
      if (r.exit.code !== 0) throw new CryptsetupError(["cryptsetup", ...args], r.exit, r.stderr);
    });
  }

  async killSlot(device: string, slot: number): Promise<void> {
    await this.#ok(["luksKillSlot", "--batch-mode", device, String(slot)]);
  }

  async importToken(device: string, id: number, token: LuksToken): Promise<void> {
    const json = JSON.stringify({ ...token, keyslots: token.keyslots.map(String) });
    await this.#withFiles(
      [new TextEncoder().encode(json)],
      ([f]) => this.#ok(["token", "import", "--token-id", String(id), `--json-file=${f}`, device]),
    );
  }

  async exportToken(device: string, id: number): Promise<LuksToken> {
    const info = await this.dump(device);
    const t = info.tokens.get(id);
    if (!t) throw new RangeError(`"${device}" has no LUKS2 token ${id}`);
    return t;
  }

  async erase(device: string): Promise<void> {
    if (!(await this.isLuks(device))) return;
    // A header whose metadata does not parse is still erased, up to the default data offset.
    const dataOffset = await this.dump(device).then(
      (i) => Math.max(i.dataOffset, DEFAULT_HEADER_BYTES),
      () => DEFAULT_HEADER_BYTES,
    );
    await this.#ok(["erase", "--batch-mode", device]);
    await zeroHead(device, dataOffset);
  }
}

/** Zero the first `length` bytes of `device` and flush them. */
async function zeroHead(device: string, length: number): Promise<void> {
  const f = await Deno.open(device, { read: true, write: true });
  try {
    length = Math.min(length, await f.seek(0, Deno.SeekMode.End));
    await f.seek(0, Deno.SeekMode.Start);
    const chunk = new Uint8Array(Math.min(length, 1 << 20));
    for (let done = 0; done < length;) {
      const n = await f.write(chunk.subarray(0, Math.min(chunk.length, length - done)));
      done += n;
    }
    await f.sync();
  } finally {
    f.close();
  }
}

/** cryptsetup's flags for `p`, fixed rather than benchmarked. Pure. */
export function pbkdfArgs(p: Pbkdf): string[] {
  if (p.algorithm === "pbkdf2") {
    return ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", String(p.iterations)];
  }
  return [
    "--pbkdf",
    "argon2id",
    "--pbkdf-memory",
    String(p.memoryKiB),
    "--pbkdf-force-iterations",
    String(p.iterations),
    "--pbkdf-parallel",
    String(p.parallel),
  ];
}
