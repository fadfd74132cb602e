/**
 * Which domain of the node each `machine` section feeds, so that a dry run can
 * say what a change touches ("network, time") in the words an operator uses,
 * without listing every dotted path. The table is typed over the schema's
 * sections, as APPLY_CLASSES is (config/apply_class.ts, which decides
 * live-or-reboot): a new section fails type-checking until it names its domain.
 *
 * @module
 */
import type { MachineConfig } from "./schema/machine_config.ts";

type Section = keyof MachineConfig["machine"];

/** Every `machine` section's domain: the controllers or host part that follows it. */
export const CONFIG_DOMAINS: { readonly [K in Section]-?: string } = {
  hostname: "network", // network.HostnameConfigController
  domainname: "network",
  install: "install",
  network: "network",
  time: "time",
  sysctls: "kernel",
  kernel: "kernel",
  trusted_roots: "trust", // trust.TrustedRootsController
  seccomp_profiles: "services", // services naming a profile get a new spec and restart
  services: "services",
  runtime: "runtime",
  api: "api",
  ca: "api", // the API's PKI follows the CA
  logging: "logging",
  upgrade: "upgrade",
};

/**
 * Parts of a section that are a domain of their own: the firewall lives in `machine.network`
 * but an operator reads "firewall" in a dry run (it is the change that can cut them off).
 */
const SUBSECTION_DOMAINS: Readonly<Record<string, string>> = {
  "network.firewall": "firewall", // firewall.FirewallController
};

/**
 * The domains of the dotted paths in `changed` (configDiff's output), sorted
 * and without repeats. A path outside `machine` (`version`) or of an unknown
 * section is the `config` document itself.
 */
export function configDomains(changed: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of changed) {
    const [root, section, field] = path.split(".");
    const d = root === "machine" && section !== undefined
      ? SUBSECTION_DOMAINS[`${section}.${field}`] ??
        (CONFIG_DOMAINS as Record<string, string>)[section]
      : undefined;
    out.add(d ?? "config");
  }
  return [...out].sort();
}
