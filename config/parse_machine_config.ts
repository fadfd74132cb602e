/**
 * Parses and validates a machine config file, reporting every problem at
 * once with its YAML path and position.
 *
 * @module
 */
import * as v from "valibot";
import {
  Composer,
  type CST,
  type Document,
  LineCounter,
  Parser,
  type YAMLError,
  YAMLParseError,
  type YAMLWarning,
} from "yaml";
import { ConfigError, type ConfigErrorInit, formatPath } from "./config_error.ts";
import { type ExpandProblem, expandValue } from "./expand.ts";
import { dropExplainedMissingKeys, issueToErrorInit } from "./issue_mapper.ts";
import {
  checkDepth,
  checkSize,
  limitError,
  MAX_ALIAS_COUNT,
  MAX_CONFIG_BYTES,
  MAX_DEPTH,
  MAX_EXPANDED_VALUES,
  MAX_REPORTED_ERRORS,
} from "./limits.ts";
import { type MachineConfig, MachineConfigSchema } from "./schema/machine_config.ts";
import { redactConfigErrors } from "./secrets.ts";
import { semanticChecks } from "./semantic_checks.ts";
import { YamlLocator } from "./yaml_locator.ts";

/** The outcome of parsing: a config with defaults filled, or every error found. */
export type ParseResult =
  /**
   * `document` is the text's value as written (aliases expanded, empty
   * entries dropped, no defaults or units filled in): what config patches
   * apply to.
   */
  | { ok: true; config: MachineConfig; document: unknown }
  | { ok: false; errors: ConfigError[] };

/** Inside the parser, errors stay plain fields until the reported ones are chosen. */
type Draft =
  | { ok: true; config: MachineConfig; document: unknown }
  | { ok: false; errors: ConfigErrorInit[] };

/** Options of {@link parseMachineConfig}. */
export interface ParseOptions {
  /**
   * The size limit in UTF-8 bytes; only the bench raises it, to show that
   * validation stays linear past it.
   * @default MAX_CONFIG_BYTES (256 KiB)
   */
  maxBytes?: number;
}

/**
 * Parses YAML `text` as a machine config. `source` names the text in errors
 * (usually the file path). Never throws: YAML syntax errors are
 * returned alone (a broken document cannot be validated reliably); otherwise
 * schema and cross-field errors are returned together, sorted by position.
 *
 * The work is bounded (config/limits.ts): a text over 256 KiB, nesting past 64
 * levels, or aliases expanding too far are refused before the work they
 * would cost, with one `limit` error. At most 100 errors are reported, then
 * one "and N more". Errors never quote a secret (config/secrets.ts).
 */
export function parseMachineConfig(
  text: string,
  source: string,
  options: ParseOptions = {},
): ParseResult {
  let result: Draft;
  try {
    result = parseBounded(text, source, options.maxBytes ?? MAX_CONFIG_BYTES);
  } catch (cause) {
    // Every bound above should make this unreachable; PID 1 still must not see a throw.
    const message = cause instanceof Error ? cause.message : String(cause);
    result = fail(
      new ConfigError({
        kind: "syntax",
        source,
        segments: [],
        line: 1,
        column: 1,
        message: `cannot validate the config: ${message}`,
        cause,
      }),
    );
  }
  if (result.ok) return result;
  const reported = capErrors(sortErrors(result.errors), source);
  return {
    ok: false,
    errors: redactConfigErrors(
      reported.map((e) => e instanceof ConfigError ? e : new ConfigError(e)),
    ),
  };
}

function parseBounded(text: string, source: string, maxBytes: number): Draft {
  const tooBig = checkSize(text, source, maxBytes);
  if (tooBig) return fail(tooBig);
  const lines = new LineCounter();
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  // The composer recurses once per level: measure the depth on the token tree first.
  const deep = checkDepth(tokens, lines, source);
  if (deep) return fail(deep);
  const doc = composeOne(tokens, text.length);
  const locator = new YamlLocator(doc, lines);
  const syntax: ConfigErrorInit[] = [...doc.errors, ...doc.warnings].map((e) =>
    yamlError(e, locator, source)
  );
  for (const d of locator.duplicates) {
    syntax.push({
      kind: "syntax",
      source,
      segments: d.segments,
      ...locator.start(d.key),
      message: `duplicate key ${JSON.stringify(d.segments.at(-1))}`,
      hint: `first defined at line ${locator.start(d.first).line}`,
    });
  }
  if (syntax.length > 0) return { ok: false, errors: syntax };

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (cause) {
    return fail(expandError(cause, source));
  }
  if (raw === null || raw === undefined) {
    return fail(
      new ConfigError({
        kind: "missing_key",
        source,
        segments: [],
        line: 1,
        column: 1,
        message: "the config is empty",
        hint: "start with `version: v1alpha1` and a `machine:` section",
      }),
    );
  }

  const expanded = expandValue(raw);
  if (!expanded.ok) return fail(expandProblem(expanded.problem, locator, source));
  raw = expanded.value;
  const result = v.safeParse(MachineConfigSchema, raw, { abortEarly: false, abortPipeEarly: true });
  const errors = dropExplainedMissingKeys(
    (result.issues ?? []).map((issue) =>
      issueToErrorInit(issue, MachineConfigSchema, locator, source)
    ),
  );
  const seen = new Set(errors.map((e) => formatPath(e.segments)));
  for (const issue of semanticChecks(raw)) {
    const error: ConfigErrorInit = {
      kind: "semantic",
      source,
      segments: issue.segments,
      ...locator.locate(issue.segments, issue.target),
      message: issue.message,
      hint: issue.hint,
    };
    // A value the schema already rejected needs no second complaint.
    if (!seen.has(formatPath(error.segments))) errors.push(error);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: result.output as MachineConfig, document: raw };
}

/** The single document of `tokens`; a second document is an error on the first. */
function composeOne(tokens: readonly CST.Token[], end: number): Document.Parsed {
  // uniqueKeys is off: the library compares each key with every earlier one
  // (quadratic); YamlLocator finds duplicates with one Set per mapping.
  const composer = new Composer({ keepSourceTokens: true, prettyErrors: false, uniqueKeys: false });
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, end)) {
    if (!doc) {
      doc = next;
      continue;
    }
    doc.errors.push(
      new YAMLParseError(
        [next.range[0], next.range[1]],
        "MULTIPLE_DOCS",
        "the file holds more than one YAML document; a machine config is one (remove the `---`)",
      ),
    );
    break;
  }
  return doc!;
}

function expandError(cause: unknown, source: string): ConfigError {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (/Excessive alias count/.test(message)) {
    return limitError(
      source,
      `cannot expand document: aliases expand more than ${MAX_ALIAS_COUNT} times (a billion laughs)`,
      { hint: "write the values out, or use fewer aliases of aliases" },
    );
  }
  return new ConfigError({
    kind: "syntax",
    source,
    segments: [],
    line: 1,
    column: 1,
    message: `cannot expand document: ${message}`,
    cause,
  });
}

function expandProblem(p: ExpandProblem, locator: YamlLocator, source: string): ConfigError {
  const at = { segments: p.segments, ...locator.locate(p.segments) };
  if (p.reason === "cycle") {
    return new ConfigError({
      kind: "syntax",
      source,
      ...at,
      message: "alias refers to a mapping or list that contains it (a cycle)",
      hint: "an alias cannot point into its own anchor",
    });
  }
  return limitError(
    source,
    p.reason === "depth"
      ? `mappings and lists are nested more than ${MAX_DEPTH} levels deep once aliases are expanded`
      : `the document expands to more than ${MAX_EXPANDED_VALUES} values through aliases`,
    { ...at, hint: "write the values out, or use fewer aliases" },
  );
}

function fail(error: ConfigErrorInit): Draft {
  return { ok: false, errors: [error] };
}

/** The first {@link MAX_REPORTED_ERRORS} errors, then one counting the rest. */
function capErrors(errors: ConfigErrorInit[], source: string): ConfigErrorInit[] {
  if (errors.length <= MAX_REPORTED_ERRORS) return errors;
  const next = errors[MAX_REPORTED_ERRORS];
  const more = errors.length - MAX_REPORTED_ERRORS;
  return [
    ...errors.slice(0, MAX_REPORTED_ERRORS),
    limitError(source, `and ${more} more error${more === 1 ? "" : "s"}`, {
      line: next.line,
      column: next.column,
      hint: `only the first ${MAX_REPORTED_ERRORS} are reported`,
    }),
  ];
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

/**
 * Library messages that end with a piece of the source; a piece longer than
 * {@link MAX_SOURCE_PIECE} is dropped (the position points at it), so a
 * mangled PEM block cannot reach an error through them.
 */
const QUOTES_SOURCE = /^(Not a YAML token|Block scalar header includes extra characters): (.*)$/s;
const MAX_SOURCE_PIECE = 8;

function yamlError(e: YAMLError | YAMLWarning, locator: YamlLocator, source: string): ConfigError {
  const message = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
  const quoted = QUOTES_SOURCE.exec(message);
  const cut = quoted !== null && quoted[2].length > MAX_SOURCE_PIECE;
  return new ConfigError({
    kind: "syntax",
    source,
    segments: [],
    ...locator.at(e.pos[0]),
    message: `YAML: ${cut ? quoted[1] : message}`,
    // The library's error repeats the piece that was dropped.
    cause: cut ? undefined : e,
  });
}

function sortErrors(errors: ConfigErrorInit[]): ConfigErrorInit[] {
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}
