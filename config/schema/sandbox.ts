/**
 * `machine.services[].sandbox`: the seccomp profile, the capabilities kept and
 * no_new_privs of one service, applied by native-ops between fork and exec
 * (docs/hardening.md). A configured service is sandboxed by default: the
 * `default` profile, no capabilities, no_new_privs.
 *
 * @module
 */
import * as v from "valibot";
import { CAPABILITIES, SECCOMP_PROFILES } from "../../platform/process/mod.ts";
import { suggest } from "../suggest.ts";
import { mapping } from "./mapping.ts";
import { checkWithHint, quote } from "./hints.ts";
import { SECCOMP_PROFILE_NAME } from "./seccomp.ts";

const NAMES: readonly string[] = CAPABILITIES;

/** `net_bind_service` or `NET_BIND_SERVICE` as the kernel's `CAP_NET_BIND_SERVICE`. */
function canonical(name: string): string {
  const upper = name.toUpperCase();
  return upper.startsWith("CAP_") ? upper : `CAP_${upper}`;
}

const Capability = v.pipe(
  v.string("expected a capability name such as CAP_NET_BIND_SERVICE"),
  checkWithHint(
    (s: string) => NAMES.includes(s),
    (issue) => `unknown capability ${quote(issue.input)}`,
    (s) => {
      const name = String(s);
      if (NAMES.includes(canonical(name))) return `write "${canonical(name)}"`;
      const near = suggest(canonical(name), NAMES);
      return near ? `did you mean "${near}"?` : "see capabilities(7) for the names";
    },
  ),
  v.metadata({ docType: "capability name" }),
);

/** At most 32 absolute paths, deduplicated, trailing slashes dropped. */
function pathList(what: string) {
  return v.pipe(
    v.array(
      v.pipe(
        v.string("expected an absolute path"),
        v.check(
          (p: string) =>
            /^\/[\x20-\x7e]*$/.test(p) && p.length <= 4096 &&
            !p.split("/").some((c) => c === ".." || c === "."),
          (issue) =>
            `invalid ${what} path ${JSON.stringify(issue.input)}: absolute, without . or .. ` +
            "components, printable ASCII, at most 4096 bytes",
        ),
      ),
      "expected a list of absolute paths",
    ),
    v.maxLength(32, `at most 32 ${what} paths`),
    v.transform((ps) => [...new Set(ps.map((p) => p.length > 1 ? p.replace(/\/+$/, "") : p))]),
  );
}

/** A service's sandbox. */
export const SandboxSchema = mapping({
  seccomp: v.optional(
    v.pipe(
      v.string(`expected ${SECCOMP_PROFILES.map((p) => `"${p}"`).join(", ")} or a profile name`),
      v.regex(
        SECCOMP_PROFILE_NAME,
        (issue) =>
          `invalid seccomp profile ${quote(issue.input)}: "default", "unconfined" or a name ` +
          "from machine.seccomp_profiles",
      ),
      v.description(
        "`default` refuses (EPERM) the syscalls a service never needs here: mounts, modules, kexec, reboot, bpf, ptrace, keyctl, namespaces, the clock and more (docs/hardening.md). `unconfined` installs no filter. Any other value names a profile in `machine.seccomp_profiles` (OCI format).",
      ),
      v.metadata({ docType: '"default" | "unconfined" | profile name' }),
    ),
    "default",
  ),
  capabilities: v.optional(
    v.pipe(
      v.array(Capability, "expected a list of capability names"),
      v.maxLength(NAMES.length, `at most ${NAMES.length} capabilities`),
      v.transform((caps) => [...new Set(caps)]),
      v.description(
        "Capabilities kept; every other one is dropped from the bounding, permitted, effective, inheritable and ambient sets. A service running as another user keeps these through the ambient set.",
      ),
      v.examples([["CAP_NET_BIND_SERVICE"]]),
    ),
    [],
  ),
  no_new_privs: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description(
        "PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities grant nothing to the service or its children.",
      ),
    ),
    true,
  ),
  read_only_paths: v.optional(
    v.pipe(
      pathList("read-only"),
      v.description(
        "Paths bound read-only onto themselves in the service's own mount namespace, set up between fork and exec: writes under them get EROFS while the host and other services still write. Each must exist when the service starts.",
      ),
      v.examples([["/etc", "/var/lib/shared"]]),
    ),
    [],
  ),
  masked_paths: v.optional(
    v.pipe(
      pathList("masked"),
      v.description(
        "Paths hidden from the service in its own mount namespace, after `read_only_paths`: an empty read-only tmpfs (mode 000) over a directory, /dev/null bound read-only over a file, as OCI runtimes mask paths. The host and other services still see them. A path that does not exist when the service starts is skipped.",
      ),
      v.examples([["/proc/kcore", "/var/lib/secrets"]]),
    ),
    [],
  ),
});

/** A parsed sandbox with defaults filled. */
export type SandboxConfig = v.InferOutput<typeof SandboxSchema>;
