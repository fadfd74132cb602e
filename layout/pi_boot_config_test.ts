import assert from "node:assert/strict";
import {
  parseOsPrefix,
  piCmdlineTxt,
  piConfigTxt,
  piSlotPaths,
  piSlotTxt,
  piTrialTxt,
} from "./pi_boot_config.ts";
import { BOARD_PROFILES, boardOptions, DEFAULT_MODULES, parseBoard } from "../imager/mod.ts";

Deno.test("config.txt is 64-bit, upstream trees, the slot's kernel and initramfs, then the slot files", () => {
  const lines = piConfigTxt().split("\n");
  const at = (l: string) => lines.indexOf(l);
  for (const l of ["arm_64bit=1", "enable_uart=1", "upstream_kernel=1", "kernel=vmlinuz"]) {
    assert.ok(at(l) >= 0, l);
  }
  assert.ok(at("initramfs initramfs.img followkernel") >= 0);
  // trial.txt is read last, so its os_prefix wins over slot.txt's.
  assert.ok(at("include slot.txt") < at("include trial.txt"));
  assert.ok(!lines.some((l) => l.startsWith("os_prefix")), "the prefix lives in slot.txt");
});

Deno.test("slot.txt and trial.txt name a slot by os_prefix; no trial names none", () => {
  assert.equal(piSlotTxt("A"), "os_prefix=A/\n");
  assert.equal(parseOsPrefix(piSlotTxt("B")), "B");
  assert.equal(parseOsPrefix(piTrialTxt("B")), "B");
  assert.equal(parseOsPrefix(piTrialTxt()), undefined);
  assert.equal(parseOsPrefix("os_prefix=C/\n"), undefined);
  assert.deepEqual(piSlotPaths("B"), {
    dir: "/B",
    kernel: "/B/vmlinuz",
    initramfs: "/B/initramfs.img",
    rootImage: "/B/root.img",
    cmdline: "/B/cmdline.txt",
  });
  assert.equal(piCmdlineTxt("a\nb "), "a b\n");
});

Deno.test("the rpi3 board: generic arm64 kernel, Pi 3 firmware and trees, SD and USB modules", () => {
  const b = BOARD_PROFILES[parseBoard("rpi3")];
  assert.equal(b.arch, "arm64");
  assert.match(b.kernel.package, /^linux-image-[\d.]+-\d+-arm64$/, "not the cloud kernel");
  assert.equal(b.firmware.package, "raspi-firmware");
  assert.deepEqual(b.firmwareFiles, ["bootcode.bin", "start.elf", "fixup.dat"]);
  assert.ok(b.dtbs.includes("bcm2837-rpi-3-b.dtb") && b.dtbs.includes("bcm2837-rpi-3-a-plus.dtb"));
  assert.ok(b.bootModules.includes("bcm2835") && b.bootModules.includes("sdhci-iproc"));
  assert.ok(!b.bootModules.includes("efivarfs"), "no UEFI on the Pi");
  assert.throws(() => parseBoard("rpi5"), TypeError);
  const o = boardOptions(b, {}, DEFAULT_MODULES);
  assert.equal(o.out, "build/machined-rpi3.img");
  assert.deepEqual(o.modules.slice(0, DEFAULT_MODULES.length), [...DEFAULT_MODULES]);
  assert.ok(o.modules.includes("dwc2") && o.modules.includes("smsc95xx"));
  assert.throws(() => boardOptions(b, { arch: "amd64" }, DEFAULT_MODULES), TypeError);
});
