/**
 * Shared by the observability commands (`memory`, `ps`, `mounts`, `stats`,
 * `cgroups`, `time`, `netstat`): the `-o` flag, plain JSON/YAML of a
 * response (uint64 as numbers, no proto type names), and human units.
 */
import { toJson, toYaml } from "../document_text.ts";
import { escapeText } from "../terminal_text.ts";
import { declareFlags } from "../flags.ts";
import { CliError } from "../io.ts";

/** The `-o table|json|yaml` flag; another word is refused before the command runs (exit 2). */
export const OUTPUT_FLAG = declareFlags({
  output: {
    kind: "enum",
    short: "o",
    values: ["table", "json", "yaml"],
    default: "table",
    noun: "output format",
    help: "table, json or yaml",
  },
});

/** The `-o table|json` flag of the commands that print a table or JSON only (`health`, `disks`). */
export const TABLE_OR_JSON_FLAG = declareFlags({
  output: {
    kind: "enum",
    short: "o",
    values: ["table", "json"],
    default: "table",
    noun: "output format",
    help: "table or json",
  },
});

/**
 * A proto message as plain data for scripts: bigints as numbers (every
 * counter here fits in 2^53), `$typeName` dropped, unset optionals left out.
 */
export function toPlain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(toPlain);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "$typeName" || v === undefined) continue;
      out[k] = toPlain(v);
    }
    return out;
  }
  return value;
}

/** A message as JSON or YAML. */
export function formatDocument(message: unknown, format: "json" | "yaml"): string {
  const plain = toPlain(message);
  return format === "json" ? toJson(plain, 2) : toYaml(plain);
}

/** `12.3 MiB`; `-` for undefined. */
export function formatBytes(n: bigint | number | undefined): string {
  if (n === undefined) return "-";
  let v = Number(n);
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** Seconds as `1h02m03s`, `4m05s` or `6.7s`. */
export function formatSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(1)}s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(Math.floor(s % 60)).padStart(2, "0");
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m${sec}s` : `${m}m${sec}s`;
}

/** A share as `12.5`, or `-` when unknown. */
export function formatPercent(p: number | undefined): string {
  return p === undefined ? "-" : p.toFixed(1);
}

/** A cell cut to `max` characters (command lines in tables); escaped first, so `\n` shows. */
export function clip(s: string, max = 80): string {
  const flat = escapeText(s).replace(/ +/g, " ");
  return flat.length > max ? flat.slice(0, max - 3) + "..." : flat;
}

/** Refuses positionals for a command that takes none. @throws CliError */
export function noArgs(command: string, args: readonly string[]): void {
  if (args.length > 0) throw new CliError(`${command}: unexpected "${args[0]}"`, 2);
}
