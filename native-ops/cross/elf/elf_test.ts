import assert from "node:assert/strict";
import { ELF_MACHINE, ElfError, parseElf, readElf } from "./elf.ts";
import { sysrootLibraries } from "./sysroot_libs.ts";
import { PROFILES, sharedLibraries } from "../../../imager/mod.ts";

const onX86 = Deno.build.arch === "x86_64";

Deno.test({
  name: "readElf: the host's Deno is x86_64 with the usual loader and libc (needs an x86_64 host)",
  ignore: !onX86,
}, async () => {
  const elf = await readElf(Deno.execPath());
  assert.equal(elf.machine, ELF_MACHINE.x86_64);
  assert.equal(elf.interpreter, "/lib64/ld-linux-x86-64.so.2");
  assert.ok(elf.needed.includes("libc.so.6"), elf.needed.join(" "));
});

Deno.test({
  name: "sysrootLibraries with / as the sysroot finds what ldd finds (needs an x86_64 host)",
  ignore: !onX86,
}, async () => {
  const deno = await Deno.realPath(Deno.execPath());
  const amd64 = PROFILES.amd64;
  const ours = await sysrootLibraries(deno, "", amd64.libDirs, amd64.elfMachine);
  // ldd reports the canonical paths it mapped; compare by file name.
  const name = (p: string) => p.slice(p.lastIndexOf("/") + 1);
  assert.deepEqual(ours.map(name).sort(), (await sharedLibraries(deno)).map(name).sort());
});

Deno.test("sysrootLibraries refuses a binary of another machine", async () => {
  const deno = await Deno.realPath(Deno.execPath());
  const other = Deno.build.arch === "x86_64" ? ELF_MACHINE.aarch64 : ELF_MACHINE.x86_64;
  await assert.rejects(() => sysrootLibraries(deno, "", ["/lib"], other), ElfError);
});

Deno.test("parseElf rejects what is not ELF64", () => {
  assert.throws(() => parseElf(new TextEncoder().encode("#!/bin/sh\n".padEnd(80))), ElfError);
});
