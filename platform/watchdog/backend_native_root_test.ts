/**
 * The native watchdog backend against softdog, as root. Safe on any host:
 * softdog is loaded here with `soft_noboot=1` (it then only logs when it
 * expires, never reboots), and the test runs only when that is what the
 * loaded softdog says; otherwise (no root, no module support, no softdog
 * for this kernel, or a softdog that would reboot) it is ignored and its
 * name says why. The QEMU tier arms the real one (e2e/upgrade_hang_step.ts).
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeWatchdogBackend } from "./backend_native.ts";

const NOBOOT = "/sys/module/softdog/parameters/soft_noboot";

async function prepare(): Promise<string> {
  if (Deno.uid() !== 0) return "needs root";
  if (!(await Deno.stat("/proc/modules").then(() => true, () => false))) {
    return "needs softdog: the host kernel has no module support";
  }
  const loaded = await Deno.stat("/sys/module/softdog").then(() => true, () => false);
  if (!loaded) {
    const r = await new Deno.Command("modprobe", { args: ["softdog", "soft_noboot=1"] })
      .output().catch(() => undefined);
    if (!r?.success) return "needs softdog: no softdog module for this kernel";
  }
  const noboot = await Deno.readTextFile(NOBOOT).then((s) => s.trim(), () => "?");
  if (noboot !== "1") return "needs softdog with soft_noboot=1: the loaded one would reboot";
  return "";
}
const skip = await prepare();

Deno.test({
  name: `softdog: open, timeout, pets, magic close${skip ? ` (${skip})` : ""}`,
  ignore: skip !== "",
}, () => {
  const dog = new NativeWatchdogBackend().open("/dev/watchdog");
  try {
    assert.match(dog.info.identity, /Software Watchdog/);
    assert.equal(dog.setTimeout(30), 30);
    dog.keepalive();
    dog.keepalive();
  } finally {
    dog.disarm();
  }
  assert.throws(() => dog.disarm(), (e) => isSysError(e, "EBADF"));
});
