/**
 * Where `-n` comes from and what it means for a run: the nodes (`-n`, else
 * the context's `nodes:` when neither `-e` nor `--insecure` is given), the
 * parallelism, and `--rolling`.
 *
 * @module
 */
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { clientConfigPath, type ConnectionFlags } from "./connection.ts";
import { DEFAULT_PARALLELISM, type FanOutOptions, splitNodes } from "./fanout.ts";
import { CliError } from "./io.ts";
import { waitRebooted } from "./rolling.ts";

/** The flags fan-out reads. */
export interface FanOutFlags extends ConnectionFlags {
  nodes?: string[];
  parallel?: string;
  rolling?: boolean;
}

/** The nodes to fan out to, or undefined to run on one endpoint as usual. */
export async function fanOutNodes(flags: FanOutFlags): Promise<string[] | undefined> {
  const given = splitNodes(flags.nodes);
  if (given.length > 0) {
    if (flags.insecure) {
      throw new CliError("-n does not go with --insecure (one node at a time)", 2);
    }
    if (flags.endpoints?.length) throw new CliError("use -n or -e, not both", 2);
    return given;
  }
  if (flags.rolling) throw new CliError("--rolling needs several nodes: -n a,b,c", 2);
  if (flags.endpoints?.length || flags.insecure) return undefined;
  try {
    const creds = resolveCredentials(
      await readClientConfig(clientConfigPath(flags)),
      flags.context,
    );
    return creds.nodes?.length ? creds.nodes : undefined;
  } catch {
    return undefined; // the single-node path reports what is wrong with the config
  }
}

/** Parallelism and rolling from the flags. */
export function fanOutOptions(flags: FanOutFlags): FanOutOptions {
  let parallelism = DEFAULT_PARALLELISM;
  if (flags.parallel !== undefined) {
    parallelism = Number(flags.parallel);
    if (!Number.isSafeInteger(parallelism) || parallelism < 1) {
      throw new CliError(`--parallel must be a positive integer, got "${flags.parallel}"`, 2);
    }
  }
  return {
    parallelism,
    ...(flags.rolling ? { waitHealthy: (node: string) => waitRebooted(flags, node) } : {}),
  };
}
