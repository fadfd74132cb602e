/**
 * Shared by the streaming commands (`logs`, `dmesg`): parsing `--tail N` and
 * running a stream until it ends or, when following, until Ctrl-C.
 */
import { CliError } from "../io.ts";

/** `--tail N` as a whole number ≥ 0, or undefined when not given. @throws CliError */
export function parseTail(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 0xffff_ffff) {
    throw new CliError(`--tail wants a whole number of lines, got "${value}"`, 2);
  }
  return Number(value);
}

/**
 * Runs `consume` with a signal that Ctrl-C (or `outer`) aborts; a stream cut
 * short that way is a normal end, anything else is rethrown.
 */
export async function untilInterrupted(
  consume: (signal: AbortSignal) => Promise<void>,
  outer?: AbortSignal,
): Promise<void> {
  const abort = new AbortController();
  const stop = () => abort.abort();
  Deno.addSignalListener("SIGINT", stop);
  outer?.addEventListener("abort", stop, { once: true });
  if (outer?.aborted) stop();
  try {
    await consume(abort.signal);
  } catch (e) {
    if (!abort.signal.aborted) throw e;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    outer?.removeEventListener("abort", stop);
  }
}
