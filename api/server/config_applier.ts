/**
 * What `ApplyConfiguration` asks of machined: validate a machine config and,
 * unless it is a dry run, put it in force. machined implements it over
 * config/ and its config loader; the API only reports the outcome.
 */
import type { ApplyMode, ConfigIssue } from "../../resources/mod.ts";
import type { MachineConfig, PatchText } from "../../config/mod.ts";
import type { ApplyConfigurationResponse } from "../gen/machined/v1/machine_pb.ts";
import { InvalidArgumentError } from "../errors/mod.ts";
import type { ActionRequester } from "./node_actions.ts";

/** Options of {@link ConfigApplier.apply}. */
export interface ConfigApplyOptions {
  /**
   * Validate and decide as a real apply would, then change nothing: an
   * invalid config answers `invalid` as usual, a mode that would be refused
   * answers `refusal` instead of throwing.
   */
  readonly dryRun: boolean;
  /** Who asked, for the event log. */
  readonly by: ActionRequester;
  /** How to put it in force. @default "auto" */
  readonly mode?: ApplyMode;
  /** `try` only: how long until the node reverts unless confirmed. @default 60_000 */
  readonly tryTimeoutMs?: number;
  /**
   * The sha256 of the config in force the caller based the change on; another
   * one in force refuses the call with {@link ConfigBaseChangedError}.
   */
  readonly baseSha256?: string;
}

/** The outcome: `valid` (and in force unless a dry run) or `invalid` with every error. */
export interface ConfigApplyResult {
  readonly state: "valid" | "invalid";
  readonly errors: readonly ConfigIssue[];
  /** The mode used (`auto` resolved); absent for an invalid config. */
  readonly mode?: Exclude<ApplyMode, "auto">;
  /** Dotted paths that differ from the running config. */
  readonly changed?: readonly string[];
  /** Those of `changed` that need a reboot. */
  readonly rebootFields?: readonly string[];
  /**
   * The config in force before this call, secrets included (absent when none
   * is); the API derives the diff and hashes (config_preview.ts) and sends
   * only a redacted rendering.
   */
  readonly current?: MachineConfig;
  /** The requested config as parsed (absent for an invalid config or a confirm). */
  readonly requested?: MachineConfig;
  /**
   * Dry run only: why the mode would refuse this change (the message of the
   * ApplyRefusedError a real apply throws); absent when it would go ahead.
   */
  readonly refusal?: string;
}

/**
 * A valid config that the asked mode cannot apply: a change needs a reboot
 * (`no-reboot`, `try`), STATE is not there to persist on (`staged`, `reboot`),
 * or no try is pending to confirm. The API answers FailedPrecondition with
 * the fields.
 */
export class ApplyRefusedError extends Error {
  override readonly name = "ApplyRefusedError";
  constructor(
    message: string,
    readonly changed: readonly string[] = [],
    readonly rebootFields: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * The config in force is not the one the caller based its change on (its
 * sha256 differs from the request's `base_sha256`): a read-modify-write that
 * lost a race. The API answers Aborted (docs/decisions.md says why); nothing
 * was changed.
 */
export class ConfigBaseChangedError extends Error {
  override readonly name = "ConfigBaseChangedError";
  constructor(readonly expected: string, readonly inForce: string) {
    super(
      `The config in force is not the one this change was based on: its sha256 is ${
        inForce || "(none: no config is in force)"
      }, the request expected ${expected}; nothing was changed (read the config again and retry)`,
    );
  }
}

/**
 * A config that does not validate, refused outside a dry run. The API answers
 * InvalidArgument with `response` (state and every error) as a detail, so
 * clients need not parse the message.
 */
export class ConfigRejectedError extends InvalidArgumentError {
  constructor(message: string, readonly response: ApplyConfigurationResponse) {
    super(message, { context: { errors: response.errors.length } });
  }
}

/**
 * Validates and applies machine configs. An invalid config must change
 * nothing (the config in force stays). Applying the config already in force
 * is harmless.
 */
export interface ConfigApplier {
  apply(text: string, options: ConfigApplyOptions): Promise<ConfigApplyResult>;
  /**
   * Applies `patches` in order to the document of the config in force,
   * secrets included, then validates and applies the result as {@link apply}
   * would.
   * @throws PatchError (config/patch) when a patch cannot apply; nothing changes
   * @throws ConfigBaseChangedError when `baseSha256` is not the config in force's
   * @throws ApplyRefusedError when no config is in force to patch
   */
  patch(patches: readonly PatchText[], options: ConfigApplyOptions): Promise<ConfigApplyResult>;
  /**
   * Persists the pending `try` config, which then stays.
   * @throws ApplyRefusedError when no try is pending
   */
  confirm(by: ActionRequester): Promise<ConfigApplyResult>;
}

/** One error as `line:col: path: message (hint)`. */
export function formatConfigIssue(e: ConfigIssue): string {
  return `${e.line}:${e.column}: ${e.path || "(document)"}: ${e.message}${
    e.hint ? ` (${e.hint})` : ""
  }`;
}

/** The InvalidArgument message for a refused config: a count, then one error per line. */
export function configRejectionMessage(errors: readonly ConfigIssue[]): string {
  const n = errors.length;
  return [
    `Machine config is invalid (${n} error${n === 1 ? "" : "s"}); nothing was changed:`,
    ...errors.map(formatConfigIssue),
  ].join("\n");
}
