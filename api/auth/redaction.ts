/**
 * What each role may see of a resource: the one place machined's API redacts
 * secrets before a resource leaves it (Get, List, Watch, and the ServiceInfo
 * of the service RPCs). The rules:
 *
 * - **Service environment values** (ServiceSpec `env`, and `machine.services[].env`
 *   inside MachineConfig) are where tokens live: a reader sees each variable's
 *   name with the value replaced by {@link REDACTED}; operators and admins see
 *   the values (they can restart the service, and admins can replace the config).
 * - **The CA private key** (`machine.ca.key` inside MachineConfig) is redacted for
 *   every role, admins included: it mints admin certificates and is never
 *   needed over the API (the node holds it; `machinectl gen` works offline
 *   from the secrets bundle). So is every other field the schema marks
 *   secret (the static passphrases of `machine.install.encryption`).
 *
 * The table is typed over every resource type, so a new type does not
 * compile until it says whether it carries secrets. Redacted copies are
 * frozen and cached per resource object, so the mapping's per-object proto
 * cache keeps working for every watcher.
 */
import type { AnyMachineResource } from "../mapping/mod.ts";
import type {
  MachineConfigSpec,
  ResourceSpecs,
  ResourceType,
  ServiceSpecSpec,
} from "../../resources/mod.ts";
import type { Role } from "../../pki/mod.ts";
import { type MachineConfig, redactConfigSecrets } from "../../config/mod.ts";
import { roleSatisfies } from "./rbac.ts";

/** The value shown in place of a secret. */
export const REDACTED = "(redacted)";

/** What a caller may see: readers get less than operators and admins. */
export type Visibility = "reader" | "privileged";

/** The visibility of `role`; no role at all sees what a reader sees. */
export function visibilityOf(role: Role | undefined): Visibility {
  return role !== undefined && roleSatisfies(role, "os:operator") ? "privileged" : "reader";
}

type Redactor<K extends ResourceType> = (spec: ResourceSpecs[K], v: Visibility) => ResourceSpecs[K];

/** Per resource type: how its spec is redacted, or null when it carries no secret. */
export const REDACTIONS: { readonly [K in ResourceType]: Redactor<K> | null } = {
  MachineConfig: (spec, v) => redactMachineConfig(spec, v),
  ConfigStatus: null,
  MachineStatus: null,
  ControllerStatus: null,
  ServiceSpec: (spec, v) => redactServiceSpec(spec, v),
  ServiceStatus: null,
  RuntimeStatus: null,
  LinkSpec: null,
  AddressSpec: null,
  RouteSpec: null,
  HostnameSpec: null,
  ResolverSpec: null,
  LinkStatus: null,
  AddressStatus: null,
  RouteStatus: null,
  ResolverStatus: null,
  HostnameStatus: null,
  DhcpLease: null,
  Dhcp6Lease: null,
  TimeStatus: null,
  KernelParamStatus: null,
  KernelModuleStatus: null,
  // The command line is world-readable on the node (/proc/cmdline); config keeps no secret there.
  KernelCmdlineStatus: null,
  DiskStatus: null,
  DiscoveredVolume: null,
  VolumeSpec: null,
  VolumeStatus: null,
  MountStatus: null,
  ProvisioningRecord: null,
  UpgradeStatus: null,
  // Certificates and PCRs are public: a reader sees them all.
  SecureBootStatus: null,
  // Certificates are public; the bundle's path and hash hold no secret.
  TrustedRootsStatus: null,
  // Subnets and ports: a reader may see the whole firewall.
  FirewallStatus: null,
  // Public keys, endpoints and counters: the private and preshared keys never enter it.
  WireguardStatus: null,
  // Names, versions and hashes of what the image ships: no secret.
  ExtensionStatus: null,
};

const cache: Record<Visibility, WeakMap<object, AnyMachineResource>> = {
  reader: new WeakMap(),
  privileged: new WeakMap(),
};

/**
 * `resource` as `role` may see it: the same object when nothing is hidden,
 * else a frozen copy with the secrets replaced by {@link REDACTED}.
 */
export function redactResource<R extends AnyMachineResource>(
  resource: R,
  role: Role | undefined,
): R {
  const redact = REDACTIONS[resource.metadata.type] as Redactor<ResourceType> | null;
  if (!redact) return resource;
  const v = visibilityOf(role);
  const hit = cache[v].get(resource);
  if (hit) return hit as R;
  const spec = redact(resource.spec as ResourceSpecs[ResourceType], v);
  const out = (spec === resource.spec ? resource : Object.freeze({ ...resource, spec })) as R;
  if (Object.isFrozen(resource)) cache[v].set(resource, out);
  return out;
}

/** A service's env as `v` may see it: names always, values only when privileged. */
export function redactEnv(
  env: Readonly<Record<string, string>>,
  v: Visibility,
): Readonly<Record<string, string>> {
  if (v === "privileged" || Object.keys(env).length === 0) return env;
  return Object.fromEntries(Object.keys(env).map((k) => [k, REDACTED]));
}

/** ServiceSpec (and ServiceInfo's spec) as `v` may see it. */
export function redactServiceSpec(spec: ServiceSpecSpec, v: Visibility): ServiceSpecSpec {
  const env = redactEnv(spec.env, v);
  return env === spec.env ? spec : { ...spec, env };
}

/**
 * MachineConfig without the CA key and the schema's other secrets (for everyone) and, for readers, without
 * env values or the config's hash: a hash over values a reader may not see
 * would let them test guesses of a weak env value offline. The config as
 * written (`document`) is redacted the same way.
 */
export function redactMachineConfig(spec: MachineConfigSpec, v: Visibility): MachineConfigSpec {
  const config = redactConfig(spec.config, v);
  const document = spec.document === undefined
    ? undefined
    : redactConfig(spec.document as MachineConfig, v);
  const sha256 = v === "privileged" || spec.sha256 === undefined ? spec.sha256 : REDACTED;
  if (config === spec.config && document === spec.document && sha256 === spec.sha256) return spec;
  return {
    ...spec,
    config,
    ...(document === undefined ? {} : { document }),
    ...(sha256 === undefined ? {} : { sha256 }),
  };
}

function redactConfig(config: MachineConfig, v: Visibility): MachineConfig {
  const machine = config?.machine;
  if (typeof machine !== "object" || machine === null) return config;
  const services = v === "privileged" || !Array.isArray(machine.services)
    ? machine.services
    : machine.services.map((s) => ({ ...s, env: { ...redactEnv(s.env ?? {}, v) } }));
  const secretless = redactConfigSecrets(config);
  if (services === machine.services && secretless === config) return config;
  return { ...secretless, machine: { ...secretless.machine, services } };
}

/** Env values shorter than this are not hunted for in command lines (too many false hits). */
const MIN_SECRET_LENGTH = 4;

/**
 * A process's argv as `v` may see it. Readers see argv, as they see a
 * service's `args` in its ServiceSpec; but a value a reader may not see (a
 * service's env value, `secrets`) that a process put on its command line
 * (`sh -c "app --token=$TOKEN"`) is replaced by {@link REDACTED} wherever it
 * occurs. The environment itself is never shown to anyone.
 */
export function redactArgv(
  argv: readonly string[],
  secrets: readonly string[],
  v: Visibility,
): string[] {
  const hidden = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH);
  if (v === "privileged" || hidden.length === 0) return [...argv];
  // Longest first, so a secret that contains another is hidden whole.
  hidden.sort((a, b) => b.length - a.length);
  return argv.map((arg) => hidden.reduce((a, s) => a.split(s).join(REDACTED), arg));
}
