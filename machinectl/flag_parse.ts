/**
 * Parses a command's arguments against its flag declarations (flags.ts),
 * strictly: an undeclared flag, a value-less value flag, a number that is not
 * one or a word outside an enum is refused before anything runs, with one line
 * (and a did-you-mean for a misspelt flag). Absent flags get their default
 * (false for a boolean), so the result has the shape ParsedFlags describes.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { suggest } from "../config/mod.ts";
import { escapeText } from "./terminal_text.ts";
import {
  type FlagDecl,
  type FlagDecls,
  flagSynopsis,
  type FlagValue,
  type FlagValues,
  isRequired,
} from "./flags.ts";

/** `--help`/`-h`, which every command answers. */
const HELP_FLAG: FlagDecl = { kind: "boolean", short: "h", help: "print this help" };

/** A refused argument list; `message` is one line. */
export class FlagError extends Error {
  override name = "FlagError";
}

/** What {@link parseFlags} returns. */
export interface ParsedArgs {
  flags: FlagValues;
  args: string[];
  help: boolean;
}

/**
 * Parses `args` against `decls`. Pure.
 * @throws FlagError for an undeclared flag, a missing value, a bad number or enum word, or
 *   an absent required flag (unless `--help` was asked for)
 */
export function parseFlags(args: readonly string[], decls: FlagDecls): ParsedArgs {
  const unknown = unknownFlag(args, decls);
  if (unknown !== undefined) throw new FlagError(unknown);
  const booleans = booleanValues(args, decls);
  const all = { ...decls, help: HELP_FLAG };
  const options = Object.fromEntries(
    Object.entries(all).map(([n, f]) => [n, {
      type: f.kind === "boolean" ? "boolean" as const : "string" as const,
      ...(f.short ? { short: f.short } : {}),
      ...(f.kind === "strings" ? { multiple: true } : {}),
    }]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: booleans.args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
  const raw: Record<string, unknown> = { ...parsed.values, ...booleans.set };
  const flags: Record<string, FlagValue> = {};
  for (const [name, f] of Object.entries(decls)) flags[name] = valueOf(name, f, raw[name]);
  const help = raw.help === true;
  if (!help) {
    const missing = Object.entries(decls).find(([n, f]) => isRequired(f) && isAbsent(flags[n]));
    if (missing) throw new FlagError(`${flagSynopsis(missing[0], missing[1])} is required`);
  }
  return { flags, args: parsed.positionals, help };
}

function isAbsent(v: FlagValue): boolean {
  return v === undefined || v === "" || (Array.isArray(v) && v.length === 0);
}

function valueOf(name: string, f: FlagDecl, raw: unknown): FlagValue {
  switch (f.kind) {
    case "boolean":
      return raw === undefined ? f.default ?? false : raw === true;
    case "strings":
      return raw as string[] | undefined;
    case "string":
      return (raw as string | undefined) ?? f.default;
    case "number": {
      if (raw === undefined) return f.default;
      const n = Number(raw);
      if ((raw as string).trim() === "" || !Number.isFinite(n)) {
        throw new FlagError(`--${name} wants a number, got "${escapeText(String(raw))}"`);
      }
      return n;
    }
    case "enum": {
      if (raw === undefined) return f.default;
      if (f.values.includes(raw as string)) return raw as string;
      const noun = f.noun ?? `--${name} value`;
      const choices = f.values.slice(0, -1).join(", ") + ` or ${f.values.at(-1)}`;
      throw new FlagError(`unknown ${noun} "${escapeText(String(raw))}" (use ${choices})`);
    }
  }
}

/**
 * `--flag=false` / `--flag=true` for a boolean flag (parseArgs takes no value
 * for booleans): returns the arguments without them and what they set, so
 * `reset --wait=false` works. Pure.
 */
export function booleanValues(
  args: readonly string[],
  decls: FlagDecls,
): { args: string[]; set: Record<string, boolean> } {
  const out: string[] = [];
  const set: Record<string, boolean> = {};
  for (const a of args) {
    const m = /^--([\w-]+)=(true|false)$/.exec(a);
    if (m && decls[m[1]]?.kind === "boolean") set[m[1]] = m[2] === "true";
    else out.push(a);
  }
  return { args: out, set };
}

/**
 * The first flag in `args` that `decls` does not declare (or a value-less
 * value flag), as a one-line message with a did-you-mean; undefined when
 * every flag is known. Pure.
 */
export function unknownFlag(args: readonly string[], decls: FlagDecls): string | undefined {
  const flags: FlagDecls = { ...decls, help: HELP_FLAG };
  const shorts = new Map(
    Object.entries(flags).filter(([, f]) => f.short).map(([n, f]) => [f.short!, n]),
  );
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return undefined;
    if (!a.startsWith("-") || a === "-") continue;
    let name: string | undefined;
    let inline = false;
    if (a.startsWith("--")) {
      name = a.slice(2).split("=")[0];
      inline = a.includes("=");
      if (!(name in flags)) {
        const near = suggest(name, Object.keys(flags));
        return `unknown flag "--${name}"` + (near ? `; did you mean "--${near}"?` : "");
      }
    } else {
      name = shorts.get(a[1]);
      if (name === undefined) return `unknown flag "-${a[1]}"`;
      inline = a.length > 2;
    }
    if (flags[name].kind !== "boolean" && !inline) {
      if (i + 1 >= args.length) return `flag "${a}" needs a value`;
      i++;
    }
  }
  return undefined;
}

/** The spellings of the flags that take a value (`--config`, `-e`, ...), e.g. to skip their values. */
export function valueFlagWords(decls: FlagDecls): string[] {
  return Object.entries(decls).filter(([, f]) => f.kind !== "boolean")
    .flatMap(([n, f]) => [`--${n}`, ...(f.short ? [`-${f.short}`] : [])]);
}
