/**
 * Turns valibot issues into {@link ConfigError}s: rewrites the generic
 * messages into YAML terms, suggests the nearest allowed key for unknown
 * keys, and finds each issue's line and column.
 *
 * @module
 */
import type * as v from "valibot";
import {
  ConfigError,
  type ConfigErrorInit,
  type ConfigErrorKind,
  type PathSegment,
} from "./config_error.ts";
import { hintFor, quote } from "./schema/hints.ts";
import { allowedKeys, schemaAt } from "./schema_walk.ts";
import { suggest } from "./suggest.ts";
import type { YamlLocator } from "./yaml_locator.ts";

/** Describes a YAML value the way a reader of the file sees it. */
export function describeValue(x: unknown): string {
  if (x === null || x === undefined) return "nothing";
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "a mapping";
  if (typeof x === "string") return `string ${JSON.stringify(x)}`;
  return `${typeof x} ${String(x)}`;
}

const YAML11_BOOLEANS = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;

const TYPE_NAMES: Record<string, string> = {
  strict_object: "a mapping",
  object: "a mapping",
  record: "a mapping",
  array: "a list",
  string: "a string",
  number: "a number",
  boolean: "true or false",
};

/** Converts one valibot issue from validating against `schema` into a positioned error. */
export function issueToError(
  issue: v.BaseIssue<unknown>,
  schema: unknown,
  locator: YamlLocator,
  source: string,
): ConfigError {
  return new ConfigError(issueToErrorInit(issue, schema, locator, source));
}

/**
 * The fields of {@link issueToError}'s error, without building the Error: a
 * file can have 100k issues, and only the first 100 are reported, so the
 * parser sorts and cuts these before it pays for the Errors' stack traces.
 */
export function issueToErrorInit(
  issue: v.BaseIssue<unknown>,
  schema: unknown,
  locator: YamlLocator,
  source: string,
): ConfigErrorInit {
  const segments: PathSegment[] = (issue.path ?? []).map((p) => p.key as PathSegment);
  const lastItem = issue.path?.at(-1) as { origin?: string } | undefined;
  const atKey = lastItem?.origin === "key";
  const isObject = issue.type === "strict_object" || issue.type === "object";
  let kind: ConfigErrorKind = issue.kind === "schema" ? "type" : "value";
  let message = issue.message;
  let hint = hintFor((issue as { requirement?: unknown }).requirement, issue.input);

  if (isObject && atKey && issue.expected === "never") {
    const key = String(segments.at(-1));
    kind = "unknown_key";
    message = `unknown key ${JSON.stringify(key)}`;
    const allowed = allowedKeys(schemaAt(schema, segments.slice(0, -1))) ?? [];
    const near = suggest(key, allowed);
    hint = near ? `did you mean ${JSON.stringify(near)}?` : `allowed keys: ${allowed.join(", ")}`;
  } else if (isObject && atKey && issue.input === undefined) {
    kind = "missing_key";
    message = locator.has(segments)
      ? `required key ${JSON.stringify(segments.at(-1))} has no value`
      : `missing required key ${JSON.stringify(segments.at(-1))}`;
  } else if (issue.kind === "schema" && message.startsWith("Invalid type:")) {
    const expected = TYPE_NAMES[issue.type] ?? issue.expected ?? issue.type;
    message = `expected ${expected}, got ${describeValue(issue.input)}`;
  } else if (issue.kind === "schema" && message.startsWith("expected ")) {
    message = `${message}, got ${describeValue(issue.input)}`;
    if (issue.type === "boolean" && YAML11_BOOLEANS.test(String(issue.input))) {
      hint = "YAML 1.2 reads yes/no/on/off as strings; write true or false";
    }
    if (
      issue.type === "number" && typeof issue.input === "string" &&
      issue.input.trim() !== "" && Number.isFinite(Number(issue.input))
    ) {
      hint = `write ${issue.input} without quotes`;
    }
  } else if (message.startsWith("Invalid ")) {
    message = `invalid value ${quote(issue.input)}: ${message}`;
  }

  const pos = kind === "missing_key"
    ? locator.locate(segments)
    : locator.locate(segments, atKey ? "key" : "value");
  return { kind, source, segments, ...pos, message, hint };
}

/**
 * Drops "missing required key" errors that an "unknown key" error beside them
 * already explains: `hostnme` suggesting `hostname` says it all.
 */
export function dropExplainedMissingKeys<E extends ConfigErrorInit>(errors: E[]): E[] {
  const suggested = new Set<string>();
  for (const e of errors) {
    const near = e.kind === "unknown_key" ? /^did you mean "(.*)"\?$/.exec(e.hint ?? "") : null;
    if (near) suggested.add(JSON.stringify([...e.segments.slice(0, -1), near[1]]));
  }
  return errors.filter((e) =>
    e.kind !== "missing_key" || !suggested.has(JSON.stringify(e.segments))
  );
}
