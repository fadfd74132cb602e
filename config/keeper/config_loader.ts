/**
 * Loads the machine config into the store: a valid config becomes the
 * MachineConfig resource; an invalid or missing one only changes ConfigStatus,
 * so a bad config never silently boots defaults and never replaces a good
 * config already in force.
 */
import type { ConfigError, MachineConfig } from "../mod.ts";
import { configSha256, deepEqual, parseMachineConfig, redactConfigSecrets } from "../mod.ts";
import {
  CONFIG_STATUS,
  CONFIG_STATUS_ID,
  type ConfigIssue,
  type ConfigPending,
  type ConfigStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineStore,
} from "../../resources/mod.ts";
import { forbiddenSecretError } from "./config_secrets.ts";

/** The owner of MachineConfig and ConfigStatus. */
export const CONFIG_OWNER = "config.Loader";

/** The result of one load. */
export type ConfigLoad =
  | { state: "valid"; config: MachineConfig }
  | { state: "invalid"; errors: ConfigError[] }
  | { state: "missing" };

/** Options of {@link applyConfigText}. */
export interface ApplyConfigTextOptions {
  /**
   * The text came from a place every process can read (the kernel command
   * line): a CA private key in it refuses the whole config.
   */
  publicSource?: string;
}

/** Parses `text` (from `source`) and records the outcome in the store. */
export async function applyConfigText(
  store: MachineStore,
  text: string,
  source: string,
  options: ApplyConfigTextOptions = {},
): Promise<ConfigLoad> {
  const secret = options.publicSource
    ? forbiddenSecretError(text, source, options.publicSource)
    : undefined;
  if (secret) {
    await writeStatus(store, { state: "invalid", source, errors: [toIssue(secret)] });
    return { state: "invalid", errors: [secret] };
  }
  const parsed = parseMachineConfig(text, source);
  if (!parsed.ok) {
    await writeStatus(store, { state: "invalid", source, errors: parsed.errors.map(toIssue) });
    return { state: "invalid", errors: parsed.errors };
  }
  await store.modify(
    { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
    CONFIG_OWNER,
    // No secret field (machine.ca.key) enters the store: readers can list it.
    // Boot hands the full config to the PKI directly.
    // The hash covers the whole config, so a changed secret is drift too.
    () => ({
      source,
      config: redactConfigSecrets(parsed.config),
      sha256: configSha256(parsed.config),
      // The same paths hold the secrets before defaults are filled in.
      document: redactConfigSecrets(parsed.document as MachineConfig),
    }),
  );
  await writeStatus(store, { state: "valid", source, errors: [] });
  return { state: "valid", config: parsed.config };
}

/** The text of the first candidate path that exists, or undefined. */
export async function readFirstConfig(
  candidates: readonly string[],
): Promise<{ text: string; path: string } | undefined> {
  for (const path of candidates) {
    try {
      return { text: await Deno.readTextFile(path), path };
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return undefined;
}

/** Records that no config was found at any of `candidates`. */
export async function recordMissingConfig(
  store: MachineStore,
  candidates: readonly string[],
): Promise<void> {
  await writeStatus(store, {
    state: "missing",
    source: candidates.join(", ") || "(no candidates)",
    errors: [],
  });
}

/** A config error as the API and ConfigStatus show it. */
export function toIssue(e: ConfigError): ConfigIssue {
  return {
    path: e.path,
    line: e.line,
    column: e.column,
    message: e.message,
    ...(e.hint ? { hint: e.hint } : {}),
  };
}

async function writeStatus(store: MachineStore, spec: ConfigStatusSpec): Promise<void> {
  await store.modify(
    { type: CONFIG_STATUS, namespace: "config", id: CONFIG_STATUS_ID },
    CONFIG_OWNER,
    () => spec,
  );
}

/**
 * Sets MachineConfig's `pending` (a try or staged config; config/keeper/config_modes.ts),
 * keeping the running config. Nothing without a MachineConfig, or when unchanged.
 */
export async function setConfigPending(
  store: MachineStore,
  pending: ConfigPending | undefined,
): Promise<void> {
  const cur = store.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID);
  if (!cur || deepEqual(cur.spec.pending, pending)) return;
  await store.modify(
    { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
    CONFIG_OWNER,
    (spec) => {
      const { pending: _old, ...rest } = spec!;
      return pending ? { ...rest, pending } : rest;
    },
  );
}
