/**
 * The native watchdog backend's hand-over from machined-init, root-free: the
 * environment variable is read once and removed (services inherit machined's
 * environment), a missing or malformed one means no watchdog, and the
 * addon's descriptor checks refuse what is not a watchdog.
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeWatchdogBackend, WATCHDOG_FD_ENV } from "./backend_native.ts";

function env(value?: string) {
  const m = new Map<string, string>(value === undefined ? [] : [[WATCHDOG_FD_ENV, value]]);
  return { get: (k: string) => m.get(k), delete: (k: string) => void m.delete(k), m };
}

Deno.test("no MACHINED_WATCHDOG_FD, or a malformed one: no watchdog, and the variable is gone", () => {
  for (const v of [undefined, "", "three", "-1"]) {
    const e = env(v);
    assert.equal(new NativeWatchdogBackend(undefined, e).inherited(), undefined);
    assert.equal(e.m.size, 0);
  }
});

Deno.test("a descriptor that is not open is refused with EBADF by the addon", () => {
  const e = env("987");
  assert.throws(
    () => new NativeWatchdogBackend(undefined, e).inherited(),
    (x) => isSysError(x, "EBADF"),
  );
  assert.equal(e.m.size, 0);
});

Deno.test("stdio is never taken for a watchdog", () => {
  assert.throws(
    () => new NativeWatchdogBackend(undefined, env("1")).inherited(),
    (x) => isSysError(x, "EBADF"),
  );
});

Deno.test("opening a device that does not exist is ENOENT", () => {
  assert.throws(
    () => new NativeWatchdogBackend().open("/nonexistent/watchdog"),
    (x) => isSysError(x, "ENOENT"),
  );
});

Deno.test("it is handed over only once", () => {
  const e = env("987");
  const b = new NativeWatchdogBackend(undefined, e);
  assert.throws(() => b.inherited());
  assert.equal(b.inherited(), undefined);
});
