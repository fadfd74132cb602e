/**
 * `deno task structure`: the house drawn from the imports. Prints the rooms with their
 * floors, the arrows between rooms, the arrows that climb a floor (`import type` counts:
 * a type shared upward couples the lower room to the higher one as much as a value does),
 * the cycles that tie values between files (`import type` does not count) and the ten
 * largest functions.
 * Tests (`*_test.ts`) and generated code (api/gen, cri/gen) are left out; test support
 * (`testing.ts`, testdata) is in. It also lists the bypasses: imports, tests included, that
 * enter another room past its surface (its `mod.ts`; test support for test code; see
 * surfaces.ts). Exits 1 when an arrow climbs, a cycle exists, a room has no floor or an
 * import bypasses a surface, so CI can run it too.
 *
 * Usage: `deno task structure [--root DIR] [--quiet]`
 */
import { readGraph } from "./graph.ts";
import { type Arrow, arrowsOf, roomsOf, valueCycles } from "./rooms.ts";
import { type FunctionSize, largestFunctions } from "./functions.ts";
import { FLOORS } from "./floors.ts";
import { bypassesOf } from "./surfaces.ts";
import type { Edge } from "./graph.ts";

export { importsOf, isTest, isTestSupport, listTs, readGraph } from "./graph.ts";
export { arrowsOf, roomOf, roomsOf, valueCycles } from "./rooms.ts";
export { functionsOf, largestFunctions } from "./functions.ts";
export { FLOORS } from "./floors.ts";
export {
  ALLOWED_BYPASSES,
  bypassesOf,
  HARNESSES,
  isEntry,
  isSharedTestSupport,
  isTestCode,
} from "./surfaces.ts";

/** The figures the closing note compares before and after. */
export interface Structure {
  rooms: string[];
  arrows: Arrow[];
  /** Arrows that climb a floor, whether their imports carry values or only types. */
  climbing: Arrow[];
  unfloored: string[];
  cycles: string[][];
  /** Imports into another room past its surface (tests included; see surfaces.ts). */
  bypasses: Edge[];
  largest: FunctionSize[];
}

/**
 * The arrows that climb: to a room on a higher floor than their own (a room without a
 * floor counts as the top). Type-only arrows climb too.
 */
export function climbingArrows(arrows: Arrow[], floors: Record<string, number>): Arrow[] {
  const floor = (room: string) => floors[room] ?? Number.POSITIVE_INFINITY;
  return arrows.filter((a) => floor(a.to) > floor(a.from));
}

/** Draws the structure of the tree at `root`. */
export async function structureOf(root: string): Promise<Structure> {
  const all = await readGraph(root, { withTests: true });
  const graph = await readGraph(root);
  const rooms = roomsOf(graph);
  const arrows = arrowsOf(graph);
  return {
    rooms,
    arrows,
    climbing: climbingArrows(arrows, FLOORS),
    unfloored: rooms.filter((r) => !(r in FLOORS)),
    cycles: valueCycles(graph),
    bypasses: bypassesOf(all),
    largest: largestFunctions(graph.texts, 10),
  };
}

/** The report as printed lines. */
export function render(s: Structure, quiet = false): string[] {
  const out: string[] = [];
  const f = (r: string) => (r in FLOORS ? String(FLOORS[r]) : "?");
  if (!quiet) {
    out.push(`rooms (${s.rooms.length}):`);
    for (const r of s.rooms) out.push(`  ${f(r)}  ${r}`);
    out.push(`arrows (${s.arrows.length}):`);
    for (const a of s.arrows) out.push(`  ${a.from} -> ${a.to} (${a.imports.length})`);
  }
  out.push(`climbing arrows (${s.climbing.length}):`);
  for (const a of s.climbing) {
    out.push(`  ${a.from} [${f(a.from)}] -> ${a.to} [${f(a.to)}]`);
    for (const e of a.imports) out.push(`    ${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`);
  }
  out.push(`rooms without a floor (${s.unfloored.length}): ${s.unfloored.join(" ")}`);
  out.push(`value cycles (${s.cycles.length}):`);
  for (const c of s.cycles) out.push(`  ${c.join(" <-> ")}`);
  out.push(`bypasses (${s.bypasses.length}):`);
  for (const e of s.bypasses) out.push(`  ${e.from} -> ${e.to}${e.typeOnly ? " (type)" : ""}`);
  out.push(`largest functions:`);
  for (const fn of s.largest) out.push(`  ${fn.lines}  ${fn.file}:${fn.line} ${fn.name}`);
  out.push(
    `summary: ${s.rooms.length} rooms, ${s.arrows.length} arrows, ${s.climbing.length} climbing, ` +
      `${s.cycles.length} value cycles, ${s.bypasses.length} bypasses, largest function ${
        s.largest[0]?.lines ?? 0
      } lines`,
  );
  return out;
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--root");
  const root = at >= 0 ? Deno.args[at + 1] : Deno.cwd();
  const s = await structureOf(root);
  console.log(render(s, Deno.args.includes("--quiet")).join("\n"));
  const bad = s.climbing.length + s.cycles.length + s.unfloored.length + s.bypasses.length;
  Deno.exit(bad > 0 ? 1 : 0);
}
