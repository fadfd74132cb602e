/**
 * The V8 flags machined (PID 1) runs with, in one place: the kernel command
 * line (imager/cmdline.ts) and the build-time code-cache warm run
 * (imager/code_cache.ts, which must use the same flags or V8 rejects the
 * cache) both read them from here. (apid, the other process they were
 * measured for, is machined-edge in Rust now.) Chosen by measurement: docs/decisions.md, "V8 flags for
 * machined and apid" (bench/heap_bench.ts).
 *
 * @module
 */

/**
 * V8 flags of machined, PID 1. A 2 MiB semi-space (V8's default grows the
 * young generation to 16 MiB per semi-space, about 42 MiB of new space under
 * allocation churn) took 10 MiB off machined's idle heap and 50–80 MiB off it
 * with 1 000 Watch streams, with controller and watch latencies no worse.
 * `--lite-mode` (V8's interpreter only, no JIT, heap tuned for size) took
 * machined's PSS after its first page-out in QEMU from 74.7 to 57.3 MiB and
 * its RSS under 1 000 Watch streams from 190 to 95 MiB, for about half the
 * unary API throughput (1 850 → 985 Get/s, p50 1.3 → 1.9 ms) and 2–8× the
 * store and watch latencies, all still below a millisecond at p50; boot time
 * unchanged. It also means no WebAssembly, which machined does not use.
 * Never `--max-old-space-size`: a heap limit reached kills PID 1, which panics
 * the kernel. docs/decisions.md, "V8 lite mode for machined".
 * `--no-enable-lazy-source-positions`: bytecode keeps its source positions, so
 * the process's first stack trace (the first error an op throws, a NotFound
 * caught as "absent") does not re-parse the 1.8 MB bundle to find them: 0.47 s
 * of the JS thread under TCG, once, early in boot. docs/decisions.md, "Source
 * positions kept with the bytecode".
 */
export const MACHINED_V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=2",
  "--lite-mode",
  "--no-enable-lazy-source-positions",
];

/** Deno's argument for `flags`: `["--v8-flags=a,b"]`, or none for no flags. */
export function v8FlagsArgs(flags: readonly string[]): string[] {
  return flags.length === 0 ? [] : [`--v8-flags=${flags.join(",")}`];
}
