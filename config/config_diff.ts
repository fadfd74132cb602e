/**
 * Which fields two machine configs differ in, as dotted paths
 * (`machine.network.interfaces`, `machine.api.listen`): what ApplyConfiguration
 * reports and what decides whether a change applies without a reboot
 * (config/apply_class.ts). Mappings are compared key by key; a list or a
 * scalar that differs is one path (a list is replaced as a whole).
 *
 * @module
 */

/** The dotted paths at which `before` and `after` differ, sorted; `[]` when equal. */
export function configDiff(before: unknown, after: unknown): string[] {
  const out: string[] = [];
  walk(before, after, "", out);
  return out.sort();
}

function walk(a: unknown, b: unknown, path: string, out: string[]): void {
  if (isMapping(a) && isMapping(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      // An absent key and an undefined member mean the same (YAML has no undefined).
      if (a[k] === undefined && b[k] === undefined) continue;
      walk(a[k], b[k], path ? `${path}.${k}` : k, out);
    }
    return;
  }
  if (!deepEqual(a, b)) out.push(path || "(document)");
}

function isMapping(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Structural equality of JSON-like values (what a parsed config holds). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isMapping(a) && isMapping(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}
