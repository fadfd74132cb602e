/**
 * Inner half of backend_native_root_test.ts: runs as PID 1 of a fresh PID
 * namespace (`unshare --pid --fork`). It refuses to do anything unless the
 * namespace is not the host's; then it checks sync and the EINVAL for
 * Ctrl-Alt-Del and kexec outside the initial namespace, prints a marker, and calls the
 * command named in argv — which kills this namespace's init, not the machine.
 * @module
 */
import { isSysError } from "../../native-ops/mod.ts";
import { assertNotHostNamespace } from "../testing.ts";
import { NativePowerBackend } from "./backend_native.ts";

if (import.meta.main) {
  assertNotHostNamespace("pid");
  if (Deno.pid !== 1) throw new Error(`expected to be PID 1 of the namespace, am ${Deno.pid}`);
  const power = new NativePowerBackend();
  await power.sync();
  try {
    await power.setCtrlAltDel("signal");
    console.log("cad: ok");
  } catch (e) {
    console.log(`cad: ${isSysError(e) ? e.code : e}`);
  }
  try {
    await power.kexec();
    console.log("kexec: ok");
  } catch (e) {
    console.log(`kexec: ${isSysError(e) ? e.code : e}`);
  }
  const cmd = Deno.env.get("MACHINED_TEST_POWER_CMD");
  console.log(`calling ${cmd}`);
  if (cmd === "restart") await power.restart();
  else if (cmd === "poweroff") await power.powerOff();
  console.log("still alive");
}
