/**
 * The machine config: one YAML file that describes a node. Parse it with
 * {@link parseMachineConfig} to get a {@link MachineConfig} with every default
 * filled in, or every problem in the file as a {@link ConfigError} with its
 * YAML path, line and column.
 *
 * @example
 * ```ts
 * import { formatConfigErrors, loadMachineConfig } from "./config/mod.ts";
 *
 * const result = await loadMachineConfig("/etc/machined/config.yaml");
 * if (!result.ok) {
 *   console.error(formatConfigErrors(result.errors));
 *   Deno.exit(1);
 * }
 * console.log(result.config.machine.hostname);
 * ```
 * @module
 */
export {
  ConfigError,
  type ConfigErrorKind,
  formatConfigErrors,
  formatPath,
  type PathSegment,
} from "./config_error.ts";
export {
  loadMachineConfig,
  parseMachineConfig,
  type ParseOptions,
  type ParseResult,
} from "./parse_machine_config.ts";
export {
  MAX_ALIAS_COUNT,
  MAX_CONFIG_BYTES,
  MAX_DEPTH,
  MAX_EXPANDED_VALUES,
  MAX_REPORTED_ERRORS,
} from "./limits.ts";
export {
  redactConfigError,
  redactConfigErrors,
  redactConfigSecrets,
  REDACTED,
  SECRET_PATHS,
  type SecretPath,
  touchesSecret,
} from "./secrets.ts";
export {
  type ConfigTemplateOptions,
  defaultDevConfig,
  renderConfigTemplate,
  type TemplateInterface,
} from "./config_template.ts";
export { validateCommand, type ValidateOutput } from "./validate_command.ts";
export {
  CONFIG_VERSIONS,
  type MachineConfig,
  MachineConfigSchema,
} from "./schema/machine_config.ts";
export type { InterfaceConfig, NetworkConfig, RouteConfig } from "./schema/network.ts";
export type { FirewallConfig, FirewallRuleConfig } from "./schema/firewall.ts";
export { parsePortRange } from "./schema/firewall.ts";
export { apiPortOf } from "./firewall_checks.ts";
export {
  isWireguardKey,
  WIREGUARD_DEFAULT_MTU,
  type WireguardConfig,
  type WireguardPeerConfig,
} from "./schema/wireguard.ts";
export {
  type BondConfig,
  type BridgeConfig,
  type ConfiguredLink,
  configuredLinks,
  type PortSelectorConfig,
  type VlanConfig,
  vlanName,
} from "./schema/network_links.ts";
export type { HealthConfig, LimitsConfig, ServiceConfig } from "./schema/services.ts";
export { BUILTIN_SERVICE_IDS, RESERVED_SERVICE_IDS } from "./schema/services.ts";
export type { TimeConfig } from "./schema/time.ts";
export type { KernelConfig } from "./schema/kernel.ts";
export type { InstallConfig } from "./schema/install.ts";
export {
  type EncryptionKeyConfig,
  KEY_KINDS,
  type KeyKind,
  MAX_KEY_SLOT,
  type VolumeEncryptionConfig,
} from "./schema/encryption.ts";
export { type EncryptionWarning, encryptionWarnings } from "./encryption_checks.ts";
export type { RuntimeConfig } from "./schema/runtime.ts";
export type { ApiConfig, LoggingConfig } from "./schema/api.ts";
export { DEFAULT_API_LISTEN } from "./schema/api.ts";
export type { CaConfig } from "./schema/ca.ts";
export { parseDuration, parseSize } from "./schema/primitives.ts";
export { configDiff, deepEqual } from "./config_diff.ts";
export {
  applyPatches,
  type ConfigPatch,
  isPatchError,
  jsonPatchOf,
  type JsonValue,
  MAX_PATCH_BYTES,
  MAX_PATCH_DEPTH,
  MAX_PATCH_OPS,
  MAX_PATCHED_VALUES,
  parsePatches,
  type PatchedText,
  PatchError,
  type PatchOperation,
  type PatchText,
  type PatchType,
  renderPatched,
} from "./patch/mod.ts";
export { canonicalJson, configSha256 } from "./config_hash.ts";
export { CONFIG_DOMAINS, configDomains } from "./config_domains.ts";
export { configTextDiff, configYamlLines } from "./config_text_diff.ts";
export {
  type LineDiff,
  type LineDiffOptions,
  MAX_DIFF_BYTES,
  MAX_DIFF_EDITS,
  unifiedLineDiff,
} from "./line_diff.ts";
export {
  APPLY_CLASSES,
  type ApplyClass,
  applyClassOf,
  rebootFields,
  type SectionClass,
} from "./apply_class.ts";
export { formatMarkdown } from "./markdown_fmt.ts";
export { CaSchema } from "./schema/ca.ts";
export { SERVICE_ID } from "./schema/services.ts";
export { suggest } from "./suggest.ts";
export {
  type CaCertificateFacts,
  type CaInspection,
  inspectCaPem,
  MAX_TRUSTED_ROOT_PEM_BYTES,
  MAX_TRUSTED_ROOTS,
  type TrustedRootConfig,
} from "./schema/trusted_roots.ts";
export * from "./kernel_args.ts";
