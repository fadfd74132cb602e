/**
 * The cross toolchain (cross.sh: a private bookworm chroot with rustc-web and
 * libstd-rust-web-dev:arm64) builds the three crates as aarch64 ELF files.
 */
import assert from "node:assert/strict";
import { checkElfMachine, crossBuild, WrongMachineError } from "./mod.ts";
import { ELF_MACHINE, readElf } from "./elf/elf.ts";

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
const canCross = Deno.uid() === 0 &&
  (await exists("/usr/sbin/debootstrap") || await exists(".cache/cross/bookworm/usr/bin/rustc"));

Deno.test({
  name:
    "native-ops, machined-init and machined-edge cross-build to aarch64 ELF (needs root and debootstrap)",
  ignore: !canCross,
}, async () => {
  const addon = await crossBuild("addon", "aarch64-unknown-linux-gnu");
  const init = await crossBuild("init", "aarch64-unknown-linux-gnu");
  const edge = await crossBuild("edge", "aarch64-unknown-linux-gnu");
  for (const f of [addon, init, edge]) await checkElfMachine(f, ELF_MACHINE.aarch64);
  assert.equal((await readElf(edge)).interpreter, "/lib/ld-linux-aarch64.so.1");
  assert.equal((await readElf(init)).interpreter, "/lib/ld-linux-aarch64.so.1");
  assert.ok((await readElf(addon)).needed.includes("libc.so.6"));
  await assert.rejects(() => checkElfMachine(addon, ELF_MACHINE.x86_64), WrongMachineError);
});
