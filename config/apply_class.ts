/**
 * Which config changes apply while the node runs and which need a reboot,
 * per top-level `machine` section (and per field where a section is split).
 * The table is typed over the schema's sections, so a new section fails
 * type-checking until it is classified here. The classes follow what the
 * code does: a section is `live` when a controller or listener reconciles it
 * from MachineConfig as it changes, `reboot` when it is read once at boot.
 *
 * @module
 */
import type { MachineConfig } from "./schema/machine_config.ts";

/** `live`, or `reboot` with why (shown to the operator). */
export type ApplyClass = { readonly live: true } | { readonly reboot: string };

type Machine = MachineConfig["machine"];
type Section = keyof Machine;
type Fields<K extends Section> = keyof NonNullable<Machine[K]>;

/** A section's class, or one class per field of a mapping section. */
export type SectionClass<K extends Section> = ApplyClass | {
  readonly fields: { readonly [F in Fields<K>]-?: ApplyClass };
};

const LIVE: ApplyClass = { live: true };

/** Every `machine` section's class; see docs/api.md ("Apply modes"). */
export const APPLY_CLASSES: { readonly [K in Section]-?: SectionClass<K> } = {
  hostname: LIVE, // network.HostnameConfigController
  domainname: LIVE, // hostname and resolver controllers
  install: {
    reboot:
      "the install disk and its provisioning are decided at boot; volumes are never unmounted",
  },
  network: LIVE, // network controllers; firewall.FirewallController for network.firewall
  time: LIVE, // time.TimeSyncController
  sysctls: LIVE, // kernel.SysctlController
  kernel: {
    fields: {
      modules: LIVE, // kernel.ModuleController loads added modules (a removed one stays loaded)
      // kernel.KernelCmdlineController writes them into the booted slot's entry at once; the
      // kernel takes them at the next reboot, which KernelCmdlineStatus says (pending-reboot).
      args: LIVE,
    },
  },
  trusted_roots: LIVE, // trust.TrustedRootsController rewrites the bundle; opted-in services restart
  seccomp_profiles: LIVE, // services naming a changed profile get a new ServiceSpec: restarted
  services: LIVE, // the service supervisor
  runtime: LIVE, // runtime.ServiceSpecController (containerd on or off)
  api: {
    fields: {
      listen: { reboot: "apid binds its listen address once, at boot" },
      cert_sans: LIVE, // api/host/api_pki.ts re-issues the server certificate
      max_message_bytes: { reboot: "apid's limits are set when it starts at boot" },
      max_concurrent_streams: { reboot: "apid's limits are set when it starts at boot" },
    },
  },
  ca: LIVE, // api/host/api_pki.ts follows the CA and restarts apid with it
  logging: LIVE, // config/keeper/logging_config.ts
  upgrade: LIVE, // upgrade reads the trusted keys at each Upgrade call
};

/** The class of one changed path (`machine.api.listen`), from the table. */
export function applyClassOf(path: string): ApplyClass {
  const [root, section, field] = path.split(".");
  if (root !== "machine" || section === undefined) return LIVE; // `version`: one value exists
  const c = (APPLY_CLASSES as Record<string, SectionClass<Section>>)[section];
  if (c === undefined) return { reboot: `unknown section "${section}"` };
  if (!("fields" in c)) return c;
  const fields = c.fields as Record<string, ApplyClass>;
  if (field !== undefined) return fields[field] ?? { reboot: `unknown field "${path}"` };
  // The whole section changed: it needs a reboot if any of its fields does.
  return Object.values(fields).find((f) => "reboot" in f) ?? LIVE;
}

/** The paths of `changed` that cannot apply without a reboot. */
export function rebootFields(changed: readonly string[]): string[] {
  return changed.filter((p) => "reboot" in applyClassOf(p));
}
