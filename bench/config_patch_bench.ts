/**
 * Benchmarks of config patches (config/patch): parsing and applying a JSON
 * Patch of 10, 100 and 1000 operations (1×, 10×, 100× a typical patch; 1000
 * is MAX_PATCH_OPS) to a document of 1000 sysctls, and computing the patch
 * `machinectl edit` sends for one changed value in documents of 1k, 10k and
 * 100k sysctls, so a quadratic path shows up as a number.
 */
import {
  applyPatches,
  jsonPatchOf,
  type JsonValue,
  parseMachineConfig,
  parsePatches,
} from "../config/mod.ts";
import { sysctlConfig } from "./config_bench.ts";
import type { Figure } from "./runtime_bench.ts";

function documentOf(n: number): JsonValue {
  const text = sysctlConfig(n);
  const r = parseMachineConfig(text, "bench.yaml", { maxBytes: text.length });
  if (!r.ok) throw new Error(`bench config is invalid: ${r.errors[0].message}`);
  return r.document as JsonValue;
}

function p50(rounds: number, f: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    f();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return +samples[Math.floor(samples.length / 2)].toFixed(2);
}

/** Parse + apply of n replace operations, and the edit's diff of one change in n keys. */
export function configPatchCost(
  opCounts = [10, 100, 1000],
  sizes = [1_000, 10_000, 100_000],
): Figure[] {
  const figures: Figure[] = [];
  const doc = documentOf(1_000);
  for (const n of opCounts) {
    const ops = Array.from({ length: n }, (_, i) => ({
      op: "replace",
      path: `/machine/sysctls/net.k${i % 1_000}`,
      value: i,
    }));
    const text = JSON.stringify(ops);
    const value = p50(20, () => void applyPatches(doc, parsePatches([{ text }])));
    figures.push({ name: `config.patch.${n}ops`, value, unit: "ms(p50)", bytes: text.length });
  }
  for (const n of sizes) {
    const before = documentOf(n);
    const after = structuredClone(before) as { machine: { sysctls: Record<string, string> } };
    after.machine.sysctls["net.k0"] = "changed";
    const value = p50(n >= 100_000 ? 3 : 10, () => void jsonPatchOf(before, after as JsonValue));
    figures.push({ name: `config.editdiff.${n}keys`, value, unit: "ms(p50)" });
  }
  return figures;
}
