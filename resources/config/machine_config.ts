/**
 * MachineConfig: the validated machine configuration, as an input resource, so
 * that every domain's controllers react to a changed config without a restart.
 */
import type { MachineConfig } from "../../config/mod.ts";
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const MACHINE_CONFIG = "MachineConfig";
/** The single MachineConfig's id. */
export const MACHINE_CONFIG_ID = "v1alpha1";

/** How ApplyConfiguration puts a config in force (docs/api.md, "Apply modes"). */
export type ApplyMode = "auto" | "no-reboot" | "reboot" | "staged" | "try";

/**
 * A config that is running but not persisted (`try`: reverted at `deadline`
 * unless confirmed) or persisted on STATE but not running (`staged`: the next
 * boot runs it).
 */
export interface ConfigPending {
  readonly mode: "try" | "staged";
  /** Dotted paths it changes: against the persisted config (try) or the running one (staged). */
  readonly changed: readonly string[];
  /** `try` only: when the node reverts, as an ISO 8601 wall-clock time. */
  readonly deadline?: string;
}

/** The parsed config plus where it came from. */
export interface MachineConfigSpec {
  /** File path, `cmdline`, `image`, or `api`. */
  readonly source: string;
  /** The config running now. */
  readonly config: MachineConfig;
  /** A try or staged config, when one is pending. */
  readonly pending?: ConfigPending;
  /**
   * SHA-256 (hex) of `config` as canonical JSON, secrets included
   * (config/config_hash.ts), so a client can detect drift by comparing it with
   * a dry run's requested hash. The config loader always sets it; absent only
   * in hand-made test resources. `(redacted)` for a reader (api/auth/redaction.ts).
   */
  readonly sha256?: string;
  /**
   * The config in force as written (no defaults or units filled in), secrets
   * redacted as in `config`: what ApplyConfiguration's patches apply to and
   * `machinectl edit` opens. Absent only in hand-made test resources.
   */
  readonly document?: unknown;
}

export const machineConfigDescriptor: ResourceDescriptor<typeof MACHINE_CONFIG, MachineConfigSpec> =
  {
    type: MACHINE_CONFIG,
    namespace: "config",
    aliases: ["machineconfig", "machineconfigs", "mc", "config"],
    description: "The validated machine configuration in force",
    columns: [
      { header: "SOURCE", value: (s) => s.source },
      { header: "HOSTNAME", value: (s) => s.config.machine.hostname ?? "" },
      { header: "PENDING", value: pendingColumn },
      // A prefix, as git shows commits; `-o yaml` has the whole hash.
      { header: "SHA256", value: (s) => s.sha256?.slice(0, 12) ?? "" },
    ],
  };

/** `try until 2026-…`, `staged`, or empty. */
function pendingColumn(s: MachineConfigSpec): string {
  const p = s.pending;
  if (!p) return "";
  return p.mode === "try" ? `try until ${p.deadline ?? "?"}` : "staged (next boot)";
}
