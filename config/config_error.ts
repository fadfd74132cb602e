/**
 * The typed error every config problem becomes: where it is (source file,
 * YAML path, line and column), what is wrong, and an optional hint.
 *
 * @module
 */

/** What kind of problem a {@link ConfigError} reports. */
export type ConfigErrorKind =
  | "io" // the file could not be read
  | "syntax" // YAML syntax (including duplicate keys and bad aliases)
  | "unknown_key" // a key the schema does not allow at that level
  | "missing_key" // a required key is absent
  | "type" // a value of the wrong type
  | "value" // a value of the right type that is not allowed
  | "semantic" // a rule across fields: duplicates, references, cycles
  | "limit"; // past a bound on size, depth, aliases or the number of errors (config/limits.ts)

/** One segment of a YAML path: a mapping key or a sequence index. */
export type PathSegment = string | number;

/** Formats path segments as `machine.network.interfaces[0].mtu` (odd keys quoted). */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** Fields of a {@link ConfigError}. */
export interface ConfigErrorInit {
  kind: ConfigErrorKind;
  source: string;
  segments: readonly PathSegment[];
  line: number;
  column: number;
  message: string;
  hint?: string;
  cause?: unknown;
}

/**
 * A problem in a machine config file. Positions are 1-based; an `io` error
 * has line and column 0 because there is no text to point into.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** What kind of problem this is. */
  readonly kind: ConfigErrorKind;
  /** The file name or label given to the parser. */
  readonly source: string;
  /** The YAML path as segments. */
  readonly segments: readonly PathSegment[];
  /** The YAML path, e.g. `machine.network.interfaces[0].mtu`; empty for the root. */
  readonly path: string;
  /** 1-based line (0 when there is no position). */
  readonly line: number;
  /** 1-based column (0 when there is no position). */
  readonly column: number;
  /** A suggestion such as `did you mean "hostname"?`. */
  readonly hint?: string;

  constructor(init: ConfigErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.source = init.source;
    this.segments = init.segments;
    this.path = formatPath(init.segments);
    this.line = init.line;
    this.column = init.column;
    if (init.hint !== undefined) this.hint = init.hint;
  }

  /** `source:line:col: path: message (hint)`, leaving out the parts that are absent. */
  format(): string {
    const where = this.line > 0 ? `${this.source}:${this.line}:${this.column}` : this.source;
    const path = this.path ? `${this.path}: ` : "";
    const hint = this.hint ? ` (${this.hint})` : "";
    return `${where}: ${path}${this.message}${hint}`;
  }
}

/** One formatted line per error, in the order given. */
export function formatConfigErrors(errors: readonly ConfigError[]): string {
  return errors.map((e) => e.format()).join("\n");
}
