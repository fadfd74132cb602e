/**
 * The V8 flags machined (PID 1) and apid run with, in one place: the kernel
 * command line (imager/cmdline.ts), the build-time code-cache warm run
 * (imager/code_cache.ts, which must use the same flags or V8 rejects the
 * cache) and apid's process spec (api/apid/apid_process_spec.ts) all read
 * them from here. Chosen by measurement: docs/decisions.md, "V8 flags for
 * machined and apid" (bench/heap_bench.ts).
 *
 * @module
 */

/**
 * V8 flags of machined, PID 1. A 2 MiB semi-space (V8's default grows the
 * young generation to 16 MiB per semi-space, about 42 MiB of new space under
 * allocation churn) took 10 MiB off machined's idle heap and 50–80 MiB off it
 * with 1 000 Watch streams, with controller and watch latencies no worse.
 * Never `--max-old-space-size`: a heap limit reached kills PID 1, which panics
 * the kernel.
 */
export const MACHINED_V8_FLAGS: readonly string[] = ["--max-semi-space-size=2"];

/** V8 flags of apid, the network-facing API process: the same, for the same reason. */
export const APID_V8_FLAGS: readonly string[] = ["--max-semi-space-size=2"];

/** Deno's argument for `flags`: `["--v8-flags=a,b"]`, or none for no flags. */
export function v8FlagsArgs(flags: readonly string[]): string[] {
  return flags.length === 0 ? [] : [`--v8-flags=${flags.join(",")}`];
}
