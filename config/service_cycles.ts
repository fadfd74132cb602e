/**
 * Dependency cycles among a config's services, found in file order so the same config
 * always reports the same cycles at the same places (config/semantic_checks.ts).
 *
 * @module
 */

/** A service as the cycle search sees it: where it is defined and what it depends on. */
export interface ServiceNode {
  id: string;
  index: number;
  deps: Array<{ id: string; at: number }>;
}

/**
 * Elementary cycles, one per strongly connected component, each starting and
 * ending at the member defined first in the file (e.g. `["a", "b", "a"]`).
 */
export function findCycles(graph: Map<string, ServiceNode>): string[][] {
  // Tarjan's algorithm, iterating nodes in file order.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  // Iterative, so a long chain of dependencies cannot overflow the stack.
  const visit = (root: string) => {
    const open = (v: string) => {
      index.set(v, counter);
      low.set(v, counter++);
      stack.push(v);
      onStack.add(v);
      work.push({ v, next: 0 });
    };
    const work: Array<{ v: string; next: number }> = [];
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const deps = graph.get(frame.v)!.deps;
      if (frame.next < deps.length) {
        const w = deps[frame.next++].id;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      const v = frame.v;
      const parent = work.at(-1);
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(v)!));
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        components.push(component);
      }
    }
  };
  const order = [...graph.values()].sort((a, b) => a.index - b.index).map((n) => n.id);
  for (const v of order) if (!index.has(v)) visit(v);

  const cycles: string[][] = [];
  for (const component of components) {
    const members = new Set(component);
    const start = order.find((id) => members.has(id))!;
    const selfLoop = graph.get(start)!.deps.some((d) => d.id === start);
    if (component.length === 1 && !selfLoop) continue;
    if (selfLoop) {
      cycles.push([start, start]);
      continue;
    }
    cycles.push(pathBack(graph, start, members));
  }
  return cycles.sort((a, b) => graph.get(a[0])!.index - graph.get(b[0])!.index);
}

/** A shortest path from `start` back to itself inside one component (BFS). */
function pathBack(graph: Map<string, ServiceNode>, start: string, members: Set<string>): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head];
    for (const { id: w } of graph.get(v)!.deps) {
      if (!members.has(w)) continue;
      if (w === start) {
        const back = [];
        for (let x = v; x !== start; x = parent.get(x)!) back.push(x);
        return [start, ...back.reverse(), start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Services a cycle's message names at most; a longer cycle shows its ends and a count. */
const CYCLE_NAMES = 12;

/** A cycle as `a -> b -> a`, its middle elided past {@link CYCLE_NAMES} services. */
export function cycleText(cycle: string[]): string {
  if (cycle.length <= CYCLE_NAMES) return cycle.join(" -> ");
  const head = cycle.slice(0, CYCLE_NAMES / 2).join(" -> ");
  const tail = cycle.slice(-CYCLE_NAMES / 2).join(" -> ");
  return `${head} -> (${cycle.length - CYCLE_NAMES} more) -> ${tail}`;
}
