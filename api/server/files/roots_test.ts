import { deepEqual, equal, throws } from "node:assert/strict";
import { ApiError } from "../../errors/mod.ts";
import { codeOf } from "../errors.ts";
import { allowedRoots, checkPath } from "./roots.ts";

const code = (fn: () => unknown) => {
  try {
    fn();
    return "ok";
  } catch (e) {
    return e instanceof ApiError ? codeOf(e) : "other";
  }
};

Deno.test("roots by role, written out by hand", () => {
  deepEqual(allowedRoots("os:reader"), ["/var/log", "/system/state"]);
  deepEqual(allowedRoots(undefined), ["/var/log", "/system/state"]);
  const wide = ["/var", "/system", "/etc", "/run", "/proc", "/sys"];
  deepEqual(allowedRoots("os:operator"), wide);
  deepEqual(allowedRoots("os:admin"), wide);
});

Deno.test("checkPath normalizes and names the root", () => {
  deepEqual(checkPath("os:reader", "/var/log/"), { path: "/var/log", root: "/var/log" });
  deepEqual(checkPath("os:reader", "//var//log/a.log"), {
    path: "/var/log/a.log",
    root: "/var/log",
  });
  deepEqual(checkPath("os:admin", "/proc/1/status"), { path: "/proc/1/status", root: "/proc" });
});

Deno.test("checkPath refuses .., ., relative paths and NUL for every role", () => {
  for (const role of ["os:admin", "os:operator", "os:reader"] as const) {
    for (const p of ["/var/log/../../etc/shadow", "/var/log/./x", "var/log", "", "/var/log/a\0"]) {
      equal(
        code(() => checkPath(role, p)),
        3, /* InvalidArgument */
        `${role} ${JSON.stringify(p)}`,
      );
    }
  }
});

Deno.test("a reader is refused outside /var/log and /system/state, including look-alikes", () => {
  for (
    const p of ["/", "/etc/hostname", "/var", "/var/lib", "/var/logs", "/system", "/proc/1/environ"]
  ) {
    equal(code(() => checkPath("os:reader", p)), 7, /* PermissionDenied */ p);
  }
  throws(() => checkPath("os:reader", "/etc"), /os:operator or higher sees/);
});

Deno.test("operators and admins: the wider list, nothing else", () => {
  for (const role of ["os:admin", "os:operator"] as const) {
    for (const p of ["/var/lib", "/etc/hostname", "/run", "/sys/class", "/system/state"]) {
      equal(code(() => checkPath(role, p)), "ok", `${role} ${p}`);
    }
    for (const p of ["/", "/root", "/home/x", "/dev/sda", "/boot", "/etcx"]) {
      equal(code(() => checkPath(role, p)), 7, `${role} ${p}`);
    }
  }
});
