import assert from "node:assert/strict";
import { ARCHES, parseArch, PROFILES } from "./profiles.ts";
import { DEBIAN_SOURCES, PrivateApt } from "./private_apt.ts";
import { kernelCmdline } from "../cmdline.ts";

Deno.test("parseArch takes Debian's and uname's names and refuses others", () => {
  assert.equal(parseArch("arm64"), "arm64");
  assert.equal(parseArch("aarch64"), "arm64");
  assert.equal(parseArch("x86_64"), "amd64");
  assert.throws(() => parseArch("riscv64"), /Unknown architecture "riscv64"/);
});

Deno.test("each profile's loader, firmware name, kernel and Rust target agree on the architecture", () => {
  const efi = { amd64: "x64", arm64: "aa64" } as const;
  const rust = { amd64: "x86_64-", arm64: "aarch64-" } as const;
  for (const arch of ARCHES) {
    const p = PROFILES[arch];
    assert.equal(p.arch, arch);
    assert.ok(p.loader.endsWith(`systemd-boot${efi[arch]}.efi`), p.loader);
    assert.equal(p.espLoaderName, `BOOT${efi[arch].toUpperCase()}.EFI`);
    assert.ok(p.kernel.package.endsWith(`-${arch}`), p.kernel.package);
    assert.ok(p.kernel.release.endsWith(`-${arch}`), p.kernel.release);
    assert.ok(p.rustTarget.startsWith(rust[arch]), p.rustTarget);
  }
});

Deno.test("the arm64 command line names the PL011 console", () => {
  const line = kernelCmdline({ program: "js", console: PROFILES.arm64.console });
  assert.match(
    line,
    /^console=ttyAMA0,115200 panic=10 transparent_hugepage=never rdinit=\/sbin\/machined-init /,
  );
});

Deno.test("the private apt never points at the host's apt state", () => {
  const opts = new PrivateApt("arm64", "/cache/arm64/apt").options();
  const values = opts.filter((_, i) => i % 2 === 1);
  assert.ok(values.includes("APT::Architecture=arm64"));
  for (const key of ["SourceList", "SourceParts", "Lists", "status", "Dir::Cache"]) {
    const v = values.find((o) => o.includes(key));
    assert.ok(v?.includes("=/cache/arm64/apt/"), `${key}: ${v}`);
  }
});

Deno.test("the private apt lists non-free-firmware (raspi-firmware) beside main, only there", () => {
  for (const s of DEBIAN_SOURCES) assert.match(s, / main non-free-firmware$/);
});
