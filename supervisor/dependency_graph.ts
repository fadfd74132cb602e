/**
 * Ordering services by `depends_on`: which services sit on a cycle (they can
 * never start), and the layers in which to stop them so that a service stops
 * before anything it depends on. Pure functions over `id → dependencies`.
 * @module
 */

/** Service id → the ids it depends on. */
export type DependencyMap = ReadonlyMap<string, readonly string[]>;

/**
 * Every cycle's members, each mapped to the cycle as a path (`a → b → a`).
 * Dependencies on ids not in the map are ignored here.
 */
export function findCycles(deps: DependencyMap): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (id: string) => {
    state.set(id, "visiting");
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d)) continue;
      if (state.get(d) === "visiting") {
        const cycle = [...stack.slice(stack.indexOf(d)), d];
        for (const member of cycle) if (!out.has(member)) out.set(member, cycle);
      } else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(id, "done");
  };
  for (const id of [...deps.keys()].sort()) if (!state.has(id)) visit(id);
  return out;
}

/**
 * Layers for starting: each service comes after every service it depends on.
 * Services on cycles are left out (they never start).
 */
export function startLayers(deps: DependencyMap): string[][] {
  const cyclic = findCycles(deps);
  const depth = new Map<string, number>();
  const depthOf = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    let d = 0;
    for (const dep of deps.get(id) ?? []) {
      if (deps.has(dep) && !cyclic.has(dep)) d = Math.max(d, depthOf(dep) + 1);
    }
    depth.set(id, d);
    return d;
  };
  const layers: string[][] = [];
  for (const id of [...deps.keys()].sort()) {
    if (cyclic.has(id)) continue;
    const d = depthOf(id);
    (layers[d] ??= []).push(id);
  }
  return layers.filter((l) => l !== undefined);
}

/**
 * Layers for stopping: the reverse of {@link startLayers}, with services on
 * cycles stopped first (nothing can depend on them having started in order).
 */
export function stopLayers(deps: DependencyMap): string[][] {
  const cyclic = [...findCycles(deps).keys()].sort();
  const layers = startLayers(deps).reverse();
  return cyclic.length > 0 ? [cyclic, ...layers] : layers;
}
