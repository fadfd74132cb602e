/**
 * Rooms (one domain per folder) and the arrows between them, computed from the import
 * graph, so the house's shape is a number anyone can rerun rather than a drawing.
 */
import type { Edge, ImportGraph } from "./graph.ts";

/**
 * Folders whose subfolders are rooms of their own (api/edge, controllers/network,
 * platform/mount, …); the files at a house's top are the house's own room.
 */
export const HOUSES = ["api", "controllers", "native-ops", "platform"];

/**
 * Subfolders that are rooms of their own outside a house (the config keeper beside the schema,
 * the Authenticode verifier beside the bundle format).
 */
export const SUBROOMS = ["config/keeper", "bundle/authenticode"];

/** The room a file lives in: its top folder, or `house/sub` inside a house; root files are "main". */
export function roomOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 1) return "main";
  const sub = SUBROOMS.find((r) => file.startsWith(r + "/"));
  if (sub !== undefined) return sub;
  if (HOUSES.includes(parts[0]) && parts.length > 2 && parts[1] !== "testdata") {
    return `${parts[0]}/${parts[1]}`;
  }
  return parts[0];
}

/** An arrow between two rooms with the imports that draw it. */
export interface Arrow {
  from: string;
  to: string;
  imports: Edge[];
}

/** Every room that holds a scanned file, sorted. */
export function roomsOf(graph: ImportGraph): string[] {
  return [...new Set(graph.files.map(roomOf))].sort();
}

/** The arrows between different rooms (type-only imports included: they still couple). */
export function arrowsOf(graph: ImportGraph): Arrow[] {
  const byKey = new Map<string, Arrow>();
  for (const e of graph.edges) {
    const from = roomOf(e.from), to = roomOf(e.to);
    if (from === to) continue;
    const key = `${from} -> ${to}`;
    const arrow = byKey.get(key) ?? { from, to, imports: [] };
    arrow.imports.push(e);
    byKey.set(key, arrow);
  }
  return [...byKey.values()].sort((a, b) =>
    a.from === b.from ? a.to.localeCompare(b.to) : a.from.localeCompare(b.from)
  );
}

/**
 * The cycles that tie values: strongly connected components of more than one file over
 * imports that are not `import type` (Tarjan's algorithm, iterative).
 */
export function valueCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph.edges) {
    if (e.typeOnly || e.from === e.to) continue;
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  }
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>();
  const onStack = new Set<string>(), stack: string[] = [];
  const out: string[][] = [];
  for (const start of graph.files) {
    if (idx.has(start)) continue;
    const work: Array<[string, number]> = [[start, 0]];
    while (work.length > 0) {
      const top = work[work.length - 1];
      const [v, i] = top;
      if (i === 0) {
        idx.set(v, index), low.set(v, index++), stack.push(v), onStack.add(v);
      }
      const succ = next.get(v) ?? [];
      if (i < succ.length) {
        top[1] = i + 1;
        const w = succ[i];
        if (!idx.has(w)) work.push([w, 0]);
        else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === idx.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) out.push(scc.sort());
      }
    }
  }
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}
