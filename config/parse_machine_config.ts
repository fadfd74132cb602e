/**
 * Parses and validates a machine config file, reporting every problem at
 * once with its YAML path and position.
 *
 * @module
 */
import * as v from "valibot";
import { LineCounter, parseDocument, type YAMLError, type YAMLWarning } from "yaml";
import { ConfigError } from "./config_error.ts";
import { dropExplainedMissingKeys, issueToError } from "./issue_mapper.ts";
import { type MachineConfig, MachineConfigSchema } from "./schema/machine_config.ts";
import { semanticChecks } from "./semantic_checks.ts";
import { YamlLocator } from "./yaml_locator.ts";

/** The outcome of parsing: a config with defaults filled, or every error found. */
export type ParseResult =
  | { ok: true; config: MachineConfig }
  | { ok: false; errors: ConfigError[] };

/** Aliases a document may expand before it is treated as hostile ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses YAML `text` as a machine config. `source` names the text in errors
 * (usually the file path). Never throws for bad input: YAML syntax errors are
 * returned alone (a broken document cannot be validated reliably); otherwise
 * schema and cross-field errors are returned together, sorted by position.
 */
export function parseMachineConfig(text: string, source: string): ParseResult {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    keepSourceTokens: true,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const locator = new YamlLocator(doc, lines);
  const syntax = [...doc.errors, ...doc.warnings].map((e) => yamlError(e, locator, source));
  if (syntax.length > 0) return { ok: false, errors: sortErrors(syntax) };

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    return {
      ok: false,
      errors: [
        new ConfigError({
          kind: "syntax",
          source,
          segments: [],
          line: 1,
          column: 1,
          message: `cannot expand document: ${message}`,
          cause,
        }),
      ],
    };
  }
  if (raw === null || raw === undefined) {
    return {
      ok: false,
      errors: [
        new ConfigError({
          kind: "missing_key",
          source,
          segments: [],
          line: 1,
          column: 1,
          message: "the config is empty",
          hint: "start with `version: v1alpha1` and a `machine:` section",
        }),
      ],
    };
  }

  raw = dropEmptyValues(raw);
  const result = v.safeParse(MachineConfigSchema, raw, { abortEarly: false, abortPipeEarly: true });
  const errors = dropExplainedMissingKeys(
    (result.issues ?? []).map((issue) => issueToError(issue, MachineConfigSchema, locator, source)),
  );
  const seen = new Set(errors.map((e) => e.path));
  for (const issue of semanticChecks(raw)) {
    const error = new ConfigError({
      kind: "semantic",
      source,
      segments: issue.segments,
      ...locator.locate(issue.segments, issue.target),
      message: issue.message,
      hint: issue.hint,
    });
    // A value the schema already rejected needs no second complaint.
    if (!seen.has(error.path)) errors.push(error);
  }
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };
  return { ok: true, config: result.output as MachineConfig };
}

/**
 * Reads and parses a config file. A file that cannot be read yields one
 * `io` error carrying the underlying error as its cause.
 */
export async function loadMachineConfig(path: string): Promise<ParseResult> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return {
      ok: false,
      errors: [
        new ConfigError({
          kind: "io",
          source: path,
          segments: [],
          line: 0,
          column: 0,
          message: `cannot read config file: ${reason}`,
          cause,
        }),
      ],
    };
  }
  return parseMachineConfig(text, path);
}

function yamlError(e: YAMLError | YAMLWarning, locator: YamlLocator, source: string): ConfigError {
  const message = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
  return new ConfigError({
    kind: "syntax",
    source,
    segments: [],
    ...locator.at(e.pos[0]),
    message: `YAML: ${message}`,
    cause: e,
  });
}

/**
 * Removes mapping entries whose value is empty (`time:` with nothing after
 * it, or `~`/`null`), so that an empty section means "all defaults" and an
 * empty required key reads as missing. Items of lists are kept: an empty
 * list item is an error.
 */
function dropEmptyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropEmptyValues);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null) out[k] = dropEmptyValues(v);
  }
  return out;
}

function sortErrors(errors: ConfigError[]): ConfigError[] {
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}
