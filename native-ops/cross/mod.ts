/**
 * Cross-compiled native code for a foreign architecture: native-ops (the
 * napi-rs addon), machined-init and machined-edge (the API's network edge), built by cross.sh in a private Debian
 * chroot (rustup's targets are not needed), and a check that what was built
 * really is an ELF file of the target machine.
 */
import { readElf } from "./elf/elf.ts";

const CROSS = new URL("./cross.sh", import.meta.url).pathname;
const NATIVE_OPS = new URL("../", import.meta.url).pathname;

/** The crates: the addon (native-ops), machined-init and machined-edge. */
export type CrossCrate = "addon" | "init" | "edge";

const CRATES: Record<CrossCrate, { dir: string; artifact: string }> = {
  addon: { dir: NATIVE_OPS, artifact: "libmachined_native_ops.so" },
  init: { dir: `${NATIVE_OPS}init`, artifact: "machined-init" },
  edge: { dir: `${NATIVE_OPS}edge`, artifact: "machined-edge" },
};

/** A built file of the wrong machine, or not ELF at all. */
export class WrongMachineError extends Error {
  override name = "WrongMachineError";
  constructor(readonly path: string, readonly machine: number, readonly expected: number) {
    super(`${path} is ELF machine ${machine}, expected ${expected}`);
  }
}

/**
 * Build `crate` for `target` (cargo's own freshness check makes a second
 * call cheap) and return the artifact's path.
 * @throws Error when cross.sh fails (its output is inherited).
 */
export async function crossBuild(crate: CrossCrate, target: string): Promise<string> {
  const { dir, artifact } = CRATES[crate];
  const { code } = await new Deno.Command("bash", {
    args: [CROSS, "build", dir],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`cross.sh build ${dir} failed with exit code ${code}`);
  return `${NATIVE_OPS}target/cross/${target}/release/${artifact}`;
}

/** @throws WrongMachineError unless `path` is an ELF file of `machine`. */
export async function checkElfMachine(path: string, machine: number): Promise<void> {
  const elf = await readElf(path);
  if (elf.machine !== machine) throw new WrongMachineError(path, elf.machine, machine);
}
export { ELF_MACHINE, readElf } from "./elf/elf.ts";
export { sysrootLibraries } from "./elf/sysroot_libs.ts";
