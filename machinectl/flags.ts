/**
 * Flag declarations: each command states its flags once (name, short form,
 * kind, default, one line of help) and everything else is derived from that
 * one object: the type its handler receives ({@link ParsedFlags}), the parser
 * (flag_parse.ts), the usage line and `--help` text (here), docs/cli.md
 * (cli_docs.ts) and the shell completion (completion.ts). A flag cannot be
 * read under a name it was not declared with: that is a compile error.
 *
 * @module
 */

interface FlagBase {
  /** One letter, e.g. `o` for `-o`. */
  readonly short?: string;
  /** One line for `--help`, docs/cli.md and fish completion. */
  readonly help: string;
}

/** A value flag the command cannot run without: refused before it runs when absent. */
interface MayBeRequired {
  /** Absent is refused (exit 2); the handler's type has no `undefined`; usage shows no brackets. */
  readonly required?: true;
}

/** `--flag`, also `--flag=false`; absent is its default, else false. */
export interface BooleanFlag extends FlagBase {
  readonly kind: "boolean";
  readonly default?: boolean;
}

/** `--flag VALUE`, the last one given wins. */
export interface StringFlag extends FlagBase, MayBeRequired {
  readonly kind: "string";
  readonly default?: string;
  /** The value's name in usage and help (default: the flag's name upper-cased). */
  readonly value?: string;
}

/** `--flag N`: refused before the command runs unless it is a finite number. */
export interface NumberFlag extends FlagBase, MayBeRequired {
  readonly kind: "number";
  readonly default?: number;
  readonly value?: string;
}

/** `--flag A --flag B`: every value, in order. */
export interface RepeatableFlag extends FlagBase, MayBeRequired {
  readonly kind: "strings";
  readonly value?: string;
}

/** `--flag WORD`, one of `values`; any other word is refused before the command runs. */
export interface EnumFlag<V extends string = string> extends FlagBase, MayBeRequired {
  readonly kind: "enum";
  readonly values: readonly V[];
  readonly default?: V;
  /** What a value is called in the refusal, e.g. `output format` (default `--NAME value`). */
  readonly noun?: string;
}

/** One flag's declaration. */
export type FlagDecl = BooleanFlag | StringFlag | NumberFlag | RepeatableFlag | EnumFlag;

/** A command's flags, by long name. */
export type FlagDecls = Readonly<Record<string, FlagDecl>>;

/** Any parsed value, as commands that are not typed by their declarations see it. */
export type FlagValue = string | number | boolean | readonly string[] | undefined;

/** Parsed flags of an unknown command (the dispatcher's and fan-out's view). */
export type FlagValues = Readonly<Record<string, FlagValue>>;

type OrUndefined<D, T> = D extends { readonly default: unknown } ? T
  : D extends { readonly required: true } ? T
  : T | undefined;

/** The parsed value of one declaration. */
export type ValueOf<D> = D extends { readonly kind: "boolean" } ? boolean
  : D extends { readonly kind: "strings" } ? OrUndefined<D, string[]>
  : D extends { readonly kind: "enum"; readonly values: readonly (infer V)[] } ? OrUndefined<D, V>
  : D extends { readonly kind: "number" } ? OrUndefined<D, number>
  : OrUndefined<D, string>;

/** The parsed flags a handler receives for declarations `F`. */
export type ParsedFlags<F extends FlagDecls> = { readonly [K in keyof F]: ValueOf<F[K]> };

/**
 * Declares flags keeping their literal types (kinds, enum values, which have
 * a default), so {@link ParsedFlags} can be derived from them.
 */
export function declareFlags<const F extends FlagDecls>(flags: F): F {
  return flags;
}

/** Whether the flag takes a value (`--flag VALUE`). */
export function takesValue(f: FlagDecl): boolean {
  return f.kind !== "boolean";
}

/** How a flag's value is written in usage and help: `N`, `FILE`, `table|json|yaml`. */
export function valueName(name: string, f: FlagDecl): string {
  if (f.kind === "enum") return f.values.join("|");
  if (f.kind === "boolean") return "";
  return f.value ?? name.toUpperCase();
}

/** `-o table|json|yaml`, `--wait=false`, `--kind KIND...`: one flag as usage shows it. */
export function flagSynopsis(name: string, f: FlagDecl): string {
  const spelled = f.short ? `-${f.short}` : `--${name}`;
  if (f.kind === "boolean") return f.default === true ? `--${name}=false` : spelled;
  const value = valueName(name, f);
  return `${spelled} ${value}${f.kind === "strings" && !value.includes("...") ? "..." : ""}`;
}

/** Whether the flag must be given. */
export function isRequired(f: FlagDecl): boolean {
  return f.kind !== "boolean" && f.required === true;
}

/** The usage line after `machinectl `: name, positionals, then each flag (optional ones in brackets). */
export function usageLine(name: string, args: string | undefined, flags: FlagDecls): string {
  const synopsis = Object.entries(flags).map(([n, f]) =>
    isRequired(f) ? flagSynopsis(n, f) : `[${flagSynopsis(n, f)}]`
  );
  return [name, ...(args ? [args] : []), ...synopsis].join(" ");
}

/** `-o, --output table|json|yaml`: the left column of help and docs. */
export function flagSpelling(name: string, f: FlagDecl): string {
  const value = f.kind === "boolean" ? "" : ` ${valueName(name, f)}`;
  return `${f.short ? `-${f.short}, ` : ""}--${name}${value}`;
}

/** ` (repeatable)` after a repeatable flag's spelling, else nothing. */
export function repeatNote(f: FlagDecl): string {
  return f.kind === "strings" ? " (repeatable)" : "";
}

/**
 * The help text with the default, if any: `table, json or yaml (default table)`;
 * `quote` marks the default up (docs put it in backticks).
 */
export function flagMeaning(f: FlagDecl, quote = (s: string) => s): string {
  const def = "default" in f ? f.default : undefined;
  if (isRequired(f)) return `${f.help} (required)`;
  return f.help + (def !== undefined ? ` (default ${quote(String(def))})` : "");
}

/** The `flags:` block of `--help`: one aligned line per flag. */
export function flagHelpLines(flags: FlagDecls): string[] {
  const rows = Object.entries(flags).map(([n, f]) => [
    (f.short ? "" : "    ") + flagSpelling(n, f) + repeatNote(f),
    flagMeaning(f),
  ]);
  const width = Math.max(0, ...rows.map(([s]) => s.length));
  return rows.map(([s, m]) => `  ${s.padEnd(width)}  ${m}`);
}
