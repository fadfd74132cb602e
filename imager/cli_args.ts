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
