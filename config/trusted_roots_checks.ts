/**
 * Cross-entry rules of `machine.trusted_roots`: names are unique, and no two entries hold the
 * same certificate (same SHA-256 fingerprint), which would otherwise be written twice into the
 * bundle and shown twice in TrustedRootsStatus. Each error names both entries. Entries whose
 * PEM is not a valid CA are left to the schema.
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import { inspectCaPem } from "./schema/trusted_roots.ts";
import type { SemanticIssue } from "./semantic_checks.ts";
import type { Obj } from "./raw_values.ts";

/** Duplicate names and duplicate certificates among `machine.trusted_roots`. */
export function checkTrustedRoots(roots: unknown, now: number = Date.now()): SemanticIssue[] {
  if (!Array.isArray(roots)) return [];
  const base: PathSegment[] = ["machine", "trusted_roots"];
  const issues: SemanticIssue[] = [];
  const names = new Map<string, number>();
  const prints = new Map<string, { index: number; name: string }>();
  roots.forEach((entry, index) => {
    const o = typeof entry === "object" && entry !== null ? entry as Obj : {};
    const name = typeof o.name === "string" ? o.name : `#${index}`;
    const label = `${JSON.stringify(name)} (entry ${index})`;
    const first = names.get(name);
    if (typeof o.name === "string" && first !== undefined) {
      issues.push({
        segments: [...base, index, "name"],
        message: `trusted root name ${JSON.stringify(name)} is already used by entry ${first}`,
        hint: "give each trusted root its own name",
      });
    } else if (typeof o.name === "string") names.set(name, index);
    if (typeof o.pem !== "string") return;
    const r = inspectCaPem(o.pem, now);
    if (!r.ok) return;
    const seen = prints.get(r.facts.fingerprint);
    if (seen) {
      issues.push({
        segments: [...base, index, "pem"],
        message: `trusted root ${label} is the same certificate as ${
          JSON.stringify(seen.name)
        } (entry ${seen.index}): ${r.facts.fingerprint}`,
        hint: "remove one of the two entries",
      });
    } else prints.set(r.facts.fingerprint, { index, name });
  });
  return issues;
}
