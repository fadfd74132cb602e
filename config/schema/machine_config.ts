/**
 * The root of the machine config schema: `version` and the `machine`
 * sections, assembled from one module per section.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { ApiSchema, LoggingSchema } from "./api.ts";
import { CaSchema } from "./ca.ts";
import { InstallSchema } from "./install.ts";
import { KernelSchema, SysctlsSchema } from "./kernel.ts";
import { NetworkSchema } from "./network.ts";
import { choice, dnsName } from "./primitives.ts";
import { RuntimeSchema } from "./runtime.ts";
import { SeccompProfilesSchema } from "./seccomp.ts";
import { ServicesSchema } from "./services.ts";
import { TimeSchema } from "./time.ts";
import { TrustedRootsSchema } from "./trusted_roots.ts";
import { UpgradeSchema } from "./upgrade.ts";

/** Config format versions this build understands. */
export const CONFIG_VERSIONS = ["v1alpha1"] as const;

/** `machine`: everything about this node. */
export const MachineSchema = mapping({
  hostname: v.pipe(
    dnsName(64, "hostname"),
    v.description(
      "The node's kernel hostname, RFC 1123 (lowercase). At most 64 characters, the kernel's limit.",
    ),
    v.examples(["node-1"]),
  ),
  domainname: v.optional(
    v.pipe(
      dnsName(253, "domain name"),
      v.description("DNS domain: the node's FQDN is `hostname.domainname`; searched first."),
      v.examples(["example.org"]),
    ),
  ),
  install: v.optional(
    v.pipe(
      InstallSchema,
      v.description("Install target. Omit to run from the boot medium without installing."),
    ),
  ),
  network: v.optional(v.pipe(NetworkSchema, v.description("Networking.")), {}),
  time: v.optional(v.pipe(TimeSchema, v.description("Clock synchronisation.")), {}),
  sysctls: v.optional(SysctlsSchema, {}),
  kernel: v.optional(v.pipe(KernelSchema, v.description("Kernel arguments and modules.")), {}),
  trusted_roots: v.optional(TrustedRootsSchema, []),
  seccomp_profiles: v.optional(SeccompProfilesSchema, {}),
  services: v.optional(ServicesSchema, []),
  runtime: v.optional(v.pipe(RuntimeSchema, v.description("Container runtime.")), {}),
  api: v.optional(v.pipe(ApiSchema, v.description("The management API.")), {}),
  ca: v.optional(
    v.pipe(
      CaSchema,
      v.description(
        "The node CA. Omit to have the node create its own on first boot (clients must then fetch it out of band).",
      ),
    ),
  ),
  logging: v.optional(v.pipe(LoggingSchema, v.description("machined's logs.")), {}),
  upgrade: v.optional(v.pipe(UpgradeSchema, v.description("Signed A/B upgrades.")), {}),
});

/** The whole config file. */
export const MachineConfigSchema = mapping({
  version: v.pipe(
    choice(CONFIG_VERSIONS),
    v.description("Config format version; machined refuses versions it does not know."),
  ),
  machine: v.pipe(MachineSchema, v.description("The node's configuration.")),
});

/**
 * A parsed, validated machine config with every default filled in. Durations
 * are milliseconds, sizes bytes, sysctl and env values strings.
 */
export type MachineConfig = v.InferOutput<typeof MachineConfigSchema>;
