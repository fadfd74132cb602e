/**
 * `machinectl -n a,b,c CMD`: one command on many nodes, concurrently with a
 * bounded parallelism, each node dialed directly with the context's
 * credentials (there is no proxying through a node). Output is one table with
 * a NODE column for table commands (get, service), every line prefixed with
 * its node for the others (streamed as it arrives, so `logs -f`, `events`
 * and `get -w` interleave), or one JSON object per node with `-o json`. A
 * node's failure is reported on stderr with its node and does not stop the
 * others; the exit code is the highest of the nodes' (non-zero if any failed).
 * `reboot --rolling` goes one node at a time and stops at the first that does
 * not come back running.
 *
 * @module
 */
import type { Command, Invocation } from "./command.ts";
import { describeError } from "./errors.ts";
import { CliError, type Io } from "./io.ts";
import { alignTable } from "./output.ts";
import { toJson } from "./document_text.ts";
import { errorForDisplay } from "./error_text.ts";
import { esc, escapeText } from "./terminal_text.ts";

/** How a command's output is merged across nodes. */
export type FanOutKind = "table" | "lines";

/** The commands `-n` runs, and how their output merges. Others refuse `-n`. */
export const FAN_OUT: Readonly<Record<string, FanOutKind>> = {
  version: "lines",
  get: "table",
  service: "table",
  "service start": "lines",
  "service stop": "lines",
  "service restart": "lines",
  logs: "lines",
  dmesg: "lines",
  events: "lines",
  reboot: "lines",
  shutdown: "lines",
  "apply-config": "lines",
  patch: "lines",
  upgrade: "lines",
  rollback: "lines",
};

/** @default parallelism */
export const DEFAULT_PARALLELISM = 8;

/** One node's run. */
export interface NodeResult {
  readonly node: string;
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
  /** Not run: a rolling run stopped before it. */
  readonly skipped?: boolean;
}

/** Options of {@link runFanOut}. */
export interface FanOutOptions {
  readonly parallelism?: number;
  /** Rolling: one at a time, each waited for with this before the next. */
  readonly waitHealthy?: (node: string) => Promise<void>;
}

/** `-n a,b -n c` → `["a","b","c"]`, without blanks and duplicates. */
export function splitNodes(values: readonly string[] | undefined): string[] {
  const all = (values ?? []).flatMap((v) => v.split(",")).map((n) => n.trim()).filter((n) => n);
  return [...new Set(all)];
}

/** Runs `limit` tasks at a time, in order of `items`; results in the same order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Runs `command` on every node and writes the merged output to `io`.
 * @returns the highest exit code of the nodes
 */
export async function runFanOut(
  command: Command,
  inv: Invocation,
  nodes: readonly string[],
  options: FanOutOptions = {},
): Promise<number> {
  const kind = FAN_OUT[command.name];
  if (!kind) throw new CliError(`${command.name} does not run on several nodes (-n)`, 2);
  const json = inv.flags.output === "json";
  const streaming = !json &&
    (kind === "lines" || inv.flags.watch === true || inv.flags.output === "yaml");
  // Node names are the operator's, but shown escaped like everything else.
  const width = Math.max(4, ...nodes.map((n) => escapeText(n).length));
  const prefix = (node: string, block: string) =>
    block.split("\n").map((l) => `${escapeText(node).padEnd(width)}   ${l}`.trimEnd()).join("\n");
  if (streaming) inv.io.out(`${"NODE".padEnd(width)}   OUTPUT`);

  const runOne = async (node: string): Promise<NodeResult> => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = {
      out: (t) => streaming ? inv.io.out(prefix(node, t)) : void out.push(t),
      err: (t) => void err.push(t),
    };
    const flags = { ...inv.flags, endpoints: [node], nodes: undefined, rolling: undefined };
    let code: number;
    try {
      code = await command.run({ ...inv, flags, io });
    } catch (e) {
      err.push(`error: ${errorForDisplay(e, (x) => describeError(x, node))}`);
      code = e instanceof CliError ? e.exitCode : 1;
    }
    for (const line of err) inv.io.err(`${escapeText(node)}: ${line}`);
    return { node, code, out, err };
  };

  let results: NodeResult[];
  if (options.waitHealthy) results = await rolling(nodes, runOne, options.waitHealthy, inv.io);
  else results = await mapBounded(nodes, options.parallelism ?? DEFAULT_PARALLELISM, runOne);

  if (json) { for (const r of results) inv.io.out(toJson(jsonOf(r))); }
  else if (!streaming) inv.io.out(mergeTables(results, width));
  return Math.max(0, ...results.map((r) => r.code));
}

async function rolling(
  nodes: readonly string[],
  runOne: (node: string) => Promise<NodeResult>,
  waitHealthy: (node: string) => Promise<void>,
  io: Io,
): Promise<NodeResult[]> {
  const results: NodeResult[] = [];
  for (const [i, node] of nodes.entries()) {
    const r = await runOne(node);
    results.push(r);
    let failed = r.code !== 0;
    if (!failed) {
      try {
        await waitHealthy(node);
      } catch (e) {
        io.err(esc`${node}: error: did not come back healthy: ${(e as Error).message}`);
        results[results.length - 1] = { ...r, code: 1 };
        failed = true;
      }
    }
    if (failed) {
      const rest = nodes.slice(i + 1);
      if (rest.length) io.err(esc`rolling: stopped at ${node}; not run on ${rest.join(", ")}`);
      for (const n of rest) results.push({ node: n, code: 1, out: [], err: [], skipped: true });
      break;
    }
  }
  return results;
}

/** One node's JSON object: its documents (`results`) or its error. */
function jsonOf(r: NodeResult): Record<string, unknown> {
  if (r.skipped) return { node: r.node, skipped: true };
  if (r.code !== 0) return { node: r.node, error: r.err.join("\n") || `exit ${r.code}` };
  return { node: r.node, results: parseDocuments(r.out.join("\n")) };
}

/** Concatenated JSON values (pretty-printed one after another) as an array. */
export function parseDocuments(text: string): unknown[] {
  if (text.trim() === "") return [];
  try {
    const one = JSON.parse(text);
    return Array.isArray(one) ? one : [one];
  } catch {
    return text.split(/\n(?=[{[])/).map((chunk) => JSON.parse(chunk));
  }
}

/**
 * One table from each node's aligned table (alignTable's output: columns
 * start where the header's cells do), with NODE first. A node whose header
 * differs from the first node's is shown line by line under it.
 */
export function mergeTables(results: readonly NodeResult[], width: number): string {
  let header: string[] | undefined;
  const rows: string[][] = [];
  const odd: string[] = [];
  for (const r of results) {
    const lines = r.out.join("\n").split("\n").filter((l) => l.trim() !== "");
    if (lines.length === 0) continue;
    const cols = columnStarts(lines[0]);
    const cells = (l: string) =>
      cols.map((c, i) => l.slice(c.start, cols[i + 1]?.start ?? undefined).trim());
    const names = cols.map((c) => c.name);
    header ??= names;
    if (names.join("\u0000") !== header.join("\u0000")) {
      odd.push(...lines.map((l) => `${escapeText(r.node).padEnd(width)}   ${l}`));
      continue;
    }
    for (const l of lines.slice(1)) rows.push([r.node, ...cells(l)]);
  }
  if (!header) return `${"NODE".padEnd(width)}`.trimEnd();
  return [alignTable([["NODE", ...header], ...rows]), ...odd].join("\n");
}

function columnStarts(header: string): { name: string; start: number }[] {
  return [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], start: m.index! }));
}
