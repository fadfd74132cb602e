/**
 * `machine.sysctls` and `machine.kernel`: kernel tunables and modules.
 *
 * @module
 */
import * as v from "valibot";
import { mapOf, mapping } from "./mapping.ts";
import { checkWithHint, quote } from "./hints.ts";
import { kernelArgProblem, MAX_KERNEL_ARGS } from "../kernel_args.ts";

/** True for a sysctl name in dotted (`net.ipv4.ip_forward`) or slashed form. */
export function isSysctlName(s: string): boolean {
  return /^[a-z0-9_]+([./][A-Za-z0-9_@:-]+)+$/.test(s) && !s.includes("..");
}

const SysctlName = v.pipe(
  v.string(),
  checkWithHint(
    isSysctlName,
    (issue) => `invalid sysctl name ${quote(issue.input)}`,
    () => 'a dotted name under /proc/sys, e.g. "net.ipv4.ip_forward"',
  ),
);

const SysctlValue = v.pipe(
  v.union(
    [v.string(), v.pipe(v.number(), v.finite())],
    "expected a sysctl value as a string or number",
  ),
  v.transform((x) => String(x)),
  v.check((s: string) => !/[\n\0]/.test(s), "sysctl values are single-line"),
  v.metadata({ docType: "string | number" }),
);

/** `machine.sysctls`: name → value, values normalised to strings. */
export const SysctlsSchema = v.pipe(
  mapOf(SysctlName, SysctlValue, "expected a map of sysctl name to value"),
  v.description(
    "Kernel parameters written under /proc/sys. Numbers are normalised to strings.",
  ),
  v.examples([{ "net.ipv4.ip_forward": "1", "vm.max_map_count": "262144" }]),
);

const ModuleSchema = mapping({
  name: v.pipe(
    v.string("expected a module name"),
    v.regex(/^[A-Za-z0-9_-]{1,55}$/, (issue) => `invalid module name ${quote(issue.input)}`),
    v.description("Module name as modprobe knows it."),
    v.examples(["br_netfilter"]),
  ),
  parameters: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string("expected a key=value string"),
          v.regex(
            /^[A-Za-z0-9_-]+=\S*$/,
            (issue) => `invalid module parameter ${quote(issue.input)}; expected key=value`,
          ),
        ),
        "expected a list of key=value strings",
      ),
      v.description("Module parameters as `key=value`."),
      v.examples([["nf_conntrack_max=262144"]]),
    ),
    [],
  ),
});

function argList(removing: boolean, what: string) {
  return v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string("expected a kernel argument"),
          v.check(
            (s: string) => kernelArgProblem(s, removing) === undefined,
            (issue) => `${quote(issue.input)}: ${kernelArgProblem(issue.input, removing)}`,
          ),
        ),
        "expected a list of kernel arguments",
      ),
      v.maxLength(MAX_KERNEL_ARGS, `at most ${MAX_KERNEL_ARGS} kernel arguments`),
      v.description(what),
    ),
    [],
  );
}

const KernelArgsSchema = mapping({
  add: argList(
    false,
    "Words added to the kernel command line before `--` (`key=value` or a flag), in order.",
  ),
  remove: argList(
    true,
    "Words taken out of the image's command line: an exact word, or a key without `=` to " +
      "take out every word with that key.",
  ),
});

/** `machine.kernel`. */
export const KernelSchema = mapping({
  args: v.optional(
    v.pipe(
      KernelArgsSchema,
      v.description(
        "Kernel arguments. A change is written at once into the booted slot's loader entry " +
          "(its `options` line only) and into the slot each install or upgrade writes; it " +
          "takes effect at the next reboot (KernelCmdlineStatus shows it pending). The " +
          "previous config's changes are undone first, so a word dropped from `add` leaves. " +
          "The node's own words (`machined.*`, `root=`, `init=`, `rdinit=`, `panic=`, " +
          "`DENO_*`) are refused, and the image's `console=` cannot be removed. Under Secure " +
          "Boot the line is inside the signed UKI, which the node cannot re-sign: nothing is " +
          "written, and the args take effect with the next signed upgrade bundle built with " +
          "them (KernelCmdlineStatus says pending-upgrade; docs/kernel.md).",
      ),
      v.examples([{ add: ["mitigations=auto,nosmt"], remove: ["quiet"] }]),
    ),
    { add: [], remove: [] },
  ),
  modules: v.optional(
    v.pipe(
      v.array(ModuleSchema, "expected a list of modules"),
      v.description("Modules to load at boot, in order."),
    ),
    [],
  ),
});

/** A parsed `machine.kernel`. */
export type KernelConfig = v.InferOutput<typeof KernelSchema>;
