import assert from "node:assert/strict";
import { kexecTrail, upgradeTimes } from "./upgrade_kexec_step.ts";

Deno.test("kexecTrail keeps the lines that say how a kexec reboot went, in order", () => {
  const console = [
    "[   12.1] machined: power: kexec staged: /B/vmlinuz from machined-b+3.conf",
    "[   12.2] eth0: link up",
    '[   74.0] machined: task: task "kexecLoad" overran its deadline of 60000 ms',
    'BdsDxe: loading Boot0001 "UEFI Misc Device"',
    "machined-init: root /esp/B/root.img",
  ].join("\n");
  assert.deepEqual(kexecTrail(console).split("\n"), [
    "[   12.1] machined: power: kexec staged: /B/vmlinuz from machined-b+3.conf",
    '[   74.0] machined: task: task "kexecLoad" overran its deadline of 60000 ms',
    'BdsDxe: loading Boot0001 "UEFI Misc Device"',
    "machined-init: root /esp/B/root.img",
  ]);
});

Deno.test("upgradeTimes reads the arm and the whole from machinectl upgrade's output", () => {
  const out =
    "armed B, 123 bytes in 61.5 s, signed by k\nnode back on slot B, version 2 and ready after 90.0 s";
  assert.deepEqual(upgradeTimes("kexec", out), {
    kexecUpgradeArmS: 61.5,
    kexecUpgradeRebootToReadyS: 28.5,
    kexecUpgradeTotalS: 90,
  });
});
