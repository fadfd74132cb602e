/**
 * What `ApplyConfiguration` asks of machined: validate a machine config and,
 * unless it is a dry run, put it in force. machined implements it over
 * config/ and its config loader; the API only reports the outcome.
 */
import type { ConfigIssue } from "../../resources/mod.ts";
import type { ActionRequester } from "./node_actions.ts";

/** Options of {@link ConfigApplier.apply}. */
export interface ConfigApplyOptions {
  /** Only validate; change nothing. */
  readonly dryRun: boolean;
  /** Who asked, for the event log. */
  readonly by: ActionRequester;
}

/** The outcome: `valid` (and in force unless a dry run) or `invalid` with every error. */
export interface ConfigApplyResult {
  readonly state: "valid" | "invalid";
  readonly errors: readonly ConfigIssue[];
}

/**
 * Validates and applies machine configs. An invalid config must change
 * nothing (the config in force stays). Applying the config already in force
 * is harmless.
 */
export interface ConfigApplier {
  apply(text: string, options: ConfigApplyOptions): Promise<ConfigApplyResult>;
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
