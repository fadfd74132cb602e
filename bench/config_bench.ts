/**
 * Benchmarks of machine-config validation on large inputs: the time to
 * validate a config with n sysctl keys (all valid, or all with a bad name),
 * so a quadratic path shows up as a number. Inputs past the size limit
 * (config/limits.ts) show the cost of refusing them. A dry run's work (the
 * paths that differ, both hashes and the bounded YAML diff) is timed the same
 * way. bench/main.ts prints the figures as JSON lines.
 */
import {
  configDiff,
  configSha256,
  configTextDiff,
  type MachineConfig,
  MAX_CONFIG_BYTES,
  parseMachineConfig,
} from "../config/mod.ts";
import type { Figure } from "./runtime_bench.ts";

/** A config with `n` sysctls; `bad` makes every name invalid (one error per key). */
export function sysctlConfig(n: number, bad = false): string {
  const lines = ["version: v1alpha1", "machine:", "  hostname: bench", "  sysctls:"];
  for (let i = 0; i < n; i++) lines.push(`    ${bad ? "Bad" : "net"}.k${i}: ${i}`);
  return lines.join("\n") + "\n";
}

/** Median wall time of `rounds` validations of `text`, with the outcome of the last. */
export function validationTime(
  name: string,
  text: string,
  rounds: number,
  maxBytes?: number,
): Figure {
  const samples: number[] = [];
  let errors = 0;
  let first = "";
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const r = parseMachineConfig(text, "bench.yaml", { maxBytes });
    samples.push(performance.now() - t);
    errors = r.ok ? 0 : r.errors.length;
    first = r.ok ? "" : r.errors[0].message;
  }
  samples.sort((a, b) => a - b);
  return {
    name,
    value: +samples[Math.floor(samples.length / 2)].toFixed(2),
    unit: "ms(p50)",
    bytes: text.length,
    errors,
    ...(first ? { firstError: first.slice(0, 80) } : {}),
  };
}

/** The most sysctl keys whose config still fits under {@link MAX_CONFIG_BYTES}. */
export function largestAccepted(bad = false): number {
  let lo = 0;
  let hi = 200_000;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sysctlConfig(mid, bad).length <= MAX_CONFIG_BYTES) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Validation time at 1k, 10k and 100k sysctl keys, valid and with one error
 * per key. An input over the size limit shows what refusing it costs; the
 * largest input under the limit shows the most validation can cost, and the
 * largest size once more with the limit lifted shows the cost stays linear.
 */
export function configValidation(sizes = [1_000, 10_000, 100_000]): Figure[] {
  const figures: Figure[] = [];
  for (const n of [...sizes, largestAccepted()]) {
    const rounds = n >= 100_000 ? 3 : n >= 10_000 ? 5 : 20;
    figures.push(validationTime(`config.validate.${n}keys`, sysctlConfig(n), rounds));
    figures.push(validationTime(`config.validate.${n}badkeys`, sysctlConfig(n, true), rounds));
  }
  // The costliest shape per byte found: a flow list of one-character items
  // filling the limit, every one of them an error.
  const items = Math.floor((MAX_CONFIG_BYTES - 100) / 2);
  const list = `version: v1alpha1\nmachine:\n  hostname: bench\n  kernel: {modules: [${
    "1,".repeat(items)
  }1]}\n`;
  figures.push(validationTime(`config.validate.flowlist${items}`, list, 3));
  // Past the limit, with the limit lifted: the cost per key stays flat.
  const n = Math.max(...sizes);
  const text = sysctlConfig(n);
  figures.push(validationTime(`config.validate.${n}keys.unlimited`, text, 1, text.length));
  return figures;
}

/**
 * A dry run's work past validation at 1k, 10k and 100k sysctl keys: the
 * changed paths, both hashes and the YAML diff, with one key changed (the
 * usual case: the common ends are set aside) and with every value changed
 * (the diff falls back at its edit budget and stops at its byte cap).
 */
export function configDryRunCost(sizes = [1_000, 10_000, 100_000]): Figure[] {
  const parse = (text: string): MachineConfig => {
    const r = parseMachineConfig(text, "bench.yaml", { maxBytes: text.length });
    if (!r.ok) throw new Error(`bench config is invalid: ${r.errors[0].message}`);
    return r.config;
  };
  const figures: Figure[] = [];
  for (const n of sizes) {
    const before = parse(sysctlConfig(n));
    const one = parse(sysctlConfig(n).replace("net.k0: 0", "net.k0: 1"));
    const all = parse(sysctlConfig(n).replaceAll(/: (\d+)$/gm, ": 9$1"));
    for (const [shape, after] of [["one", one], ["all", all]] as const) {
      const rounds = n >= 100_000 ? 3 : n >= 10_000 ? 5 : 20;
      const samples: number[] = [];
      let bytes = 0;
      for (let i = 0; i < rounds; i++) {
        const t = performance.now();
        configDiff(before, after);
        configSha256(before);
        configSha256(after);
        bytes = configTextDiff(before, after).text.length;
        samples.push(performance.now() - t);
      }
      samples.sort((a, b) => a - b);
      figures.push({
        name: `config.dryrun.${n}keys.${shape}changed`,
        value: +samples[Math.floor(samples.length / 2)].toFixed(2),
        unit: "ms(p50)",
        bytes,
      });
    }
  }
  return figures;
}
