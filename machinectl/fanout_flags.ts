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
import { waitRebooted, waitRunning } from "./rolling.ts";

/** The flags fan-out reads. */
export interface FanOutFlags extends ConnectionFlags {
  nodes?: string[];
  parallel?: string;
  rolling?: boolean;
  /** upgrade's: a rolling upgrade needs the command's own wait for the new slot. */
  wait?: boolean;
  stage?: boolean;
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

/**
 * Parallelism and rolling from the flags. A rolling `reboot` waits for each
 * node to go down and come back running; a rolling `upgrade` (whose own run
 * waits until the node is back on the new slot and version) only checks the
 * node is running before the next, and refuses `--stage` or `--wait=false`,
 * which would roll on before any node had booted the new image.
 */
export function fanOutOptions(flags: FanOutFlags, command = "reboot"): FanOutOptions {
  let parallelism = DEFAULT_PARALLELISM;
  if (flags.parallel !== undefined) {
    parallelism = Number(flags.parallel);
    if (!Number.isSafeInteger(parallelism) || parallelism < 1) {
      throw new CliError(`--parallel must be a positive integer, got "${flags.parallel}"`, 2);
    }
  }
  if (!flags.rolling) return { parallelism };
  if (command === "upgrade" || command === "rollback") {
    if (flags.stage || flags.wait === false) {
      throw new CliError(`${command} --rolling waits for each node: drop --stage/--wait=false`, 2);
    }
    return { parallelism, waitHealthy: (node: string) => waitRunning(flags, node) };
  }
  return { parallelism, waitHealthy: (node: string) => waitRebooted(flags, node) };
}
