/**
 * What an ApplyConfiguration reply says of a change besides the changed
 * paths: the diff of the config in force against the requested one, the
 * domains it touches and both configs' hashes. A dry run is how an operator
 * (or Ansible's check mode) looks before applying, so its diff is printed in
 * terminals and CI logs: it is rendered from configs redacted as a reader sees
 * MachineConfig (api/auth/redaction.ts: service env values and the CA key),
 * after every schema-marked secret (config/secrets.ts), whatever the
 * caller's role; a redacted value that changes shows as
 * {@link CHANGED_REDACTED}, never as itself.
 */
import {
  configDomains,
  configSha256,
  configTextDiff,
  deepEqual,
  type MachineConfig,
  redactConfigSecrets,
  REDACTED,
} from "../../config/mod.ts";
import { redactMachineConfig } from "../auth/mod.ts";

/** What a redacted value that differs between the two configs is shown as. */
export const CHANGED_REDACTED = "(changed, redacted)";

/** The reply's fields derived from the two configs. */
export interface ConfigPreview {
  /** Unified diff of both as YAML, secrets redacted; empty when they are equal. */
  readonly diff: string;
  /** The diff was cut (line_diff.ts, MAX_DIFF_BYTES). */
  readonly diffTruncated: boolean;
  /** The domains of `changed`, sorted. */
  readonly domains: readonly string[];
  /** Hash of the config in force; empty when none is. */
  readonly currentSha256: string;
  readonly requestedSha256: string;
  /** The hashes differ: applying the requested config would change something. */
  readonly differs: boolean;
}

/**
 * The preview of `requested` over `current` (undefined in maintenance, when no
 * config is in force), whose dotted paths that differ are `changed`.
 */
export function previewConfigChange(
  current: MachineConfig | undefined,
  requested: MachineConfig,
  changed: readonly string[],
): ConfigPreview {
  const before = current === undefined ? undefined : forDiff(current);
  const after = markChanged(forDiff(requested), requested, current);
  const diff = configTextDiff(before, after);
  const currentSha256 = current === undefined ? "" : configSha256(current);
  const requestedSha256 = configSha256(requested);
  return {
    diff: diff.text,
    diffTruncated: diff.truncated,
    domains: configDomains(changed),
    currentSha256,
    requestedSha256,
    differs: currentSha256 !== requestedSha256,
  };
}

/** `config` as a reader sees it, after every schema secret is gone. */
function forDiff(config: MachineConfig): MachineConfig {
  return redactMachineConfig({ source: "", config: redactConfigSecrets(config) }, "reader").config;
}

/**
 * `red` (the requested config, redacted) with each {@link REDACTED} whose raw
 * value differs from the one in force at the same path (lists by position)
 * replaced by {@link CHANGED_REDACTED}. A value new in the requested config
 * stays `(redacted)`: the diff already shows it as added.
 */
function markChanged(red: unknown, after: unknown, before: unknown): unknown {
  if (red === REDACTED) {
    return before !== undefined && !deepEqual(after, before) ? CHANGED_REDACTED : red;
  }
  if (Array.isArray(red)) return red.map((x, i) => markChanged(x, at(after, i), at(before, i)));
  if (typeof red === "object" && red !== null) {
    return Object.fromEntries(
      Object.entries(red).map(([k, x]) => [k, markChanged(x, at(after, k), at(before, k))]),
    );
  }
  return red;
}

function at(v: unknown, key: string | number): unknown {
  return typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
}
