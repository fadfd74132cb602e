/**
 * A small command-line parser for the imager's tasks (`--name value`,
 * `--name=value`, boolean flags, repeatable options). No @std/cli on this
 * machine, and the options are few.
 */

/** Parsed arguments: the last value of each option, all values of repeatable ones. */
export interface ParsedArgs {
  values: Map<string, string[]>;
  flags: Set<string>;
}

/**
 * Parse `args` given the boolean flag names and the value option names.
 * @throws TypeError on an unknown option or a missing value.
 */
export function parseArgs(
  args: string[],
  spec: { flags: string[]; options: string[] },
): ParsedArgs {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new TypeError(`Unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (spec.flags.includes(name) && eq < 0) {
      flags.add(name);
      continue;
    }
    if (!spec.options.includes(name)) throw new TypeError(`Unknown option "--${name}"`);
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new TypeError(`Option "--${name}" needs a value`);
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { values, flags };
}

/** The last value given for `name`, if any. */
export function last(parsed: ParsedArgs, name: string): string | undefined {
  return parsed.values.get(name)?.at(-1);
}

/** What a command line asks for: a run with its arguments, the usage, or a usage error. */
export type CliRequest =
  | { kind: "run"; args: ParsedArgs }
  | { kind: "help"; text: string }
  | { kind: "error"; message: string; usage: string };

/** A task's command line: its flags, its value options and its usage text. */
export interface CliSpec {
  flags: string[];
  options: string[];
  usage: string;
}

/**
 * Parse a task's arguments without doing anything: `--help` (or `-h`) anywhere
 * asks for the usage, even beside a bad flag; an unknown flag or a missing
 * value is a usage error. `check` runs on the parsed arguments (option values
 * that make no sense, such as `--compression gzip`) and its TypeError is a usage
 * error too. Pure, so each entry point's decision is tested without running it.
 */
export function parseCli(
  argv: readonly string[],
  spec: CliSpec,
  check?: (args: ParsedArgs) => void,
): CliRequest {
  if (argv.includes("--help") || argv.includes("-h")) return { kind: "help", text: spec.usage };
  try {
    const args = parseArgs([...argv], { flags: spec.flags, options: spec.options });
    check?.(args);
    return { kind: "run", args };
  } catch (e) {
    if (!(e instanceof TypeError) && !(e instanceof RangeError)) throw e;
    return { kind: "error", message: e.message, usage: spec.usage };
  }
}

/**
 * {@link parseCli} for an entry point: the usage goes to stdout with exit 0,
 * a usage error to stderr with exit 2 (as `getopt` tools do), before the task
 * builds or boots anything; otherwise the parsed arguments.
 */
export function parseCliOrExit(
  argv: readonly string[],
  spec: CliSpec,
  check?: (args: ParsedArgs) => void,
): ParsedArgs {
  const r = parseCli(argv, spec, check);
  if (r.kind === "run") return r.args;
  exitWith(r);
}

/** Print what {@link parseCli} answered (the usage or an error) and exit 0 or 2. */
export function exitWith(
  r: { kind: "help"; text: string } | { kind: "error"; message: string; usage: string },
): never {
  if (r.kind === "help") {
    console.log(r.text);
    Deno.exit(0);
  }
  console.error(`error: ${r.message}\n${r.usage}`);
  Deno.exit(2);
}
