/**
 * `bench/boot_pair.ts`'s command line, parsed before anything boots: a typo
 * in a flag must not cost the minutes of the boots spelt right.
 *
 * @module
 */
/** What the memory figures wait for after `API ready`. */
export type MemoryWait = "footprint" | "page-out";

/** A boot_pair run. */
export interface BootPairArgs {
  before: string;
  after: string;
  pairs: number;
  /** The admin client config: each boot also times QEMU start → Version answered over mTLS. */
  client?: string;
  /**
   * `footprint`: wait for the footprint line (containerd ready: MemAvailable, PSS,
   * RssAnon/RssFile); `page-out`: for machined's first page-out, 30 s after its stage
   * (PSS and RssFile around it, MemAvailable), with the footprint line's figures
   * when it came first (a node without containerd prints none).
   */
  memory?: MemoryWait;
  /** A name carried by every JSON line, so one results file can hold several runs. */
  label?: string;
}

/** boot_pair's usage. */
export const BOOT_PAIR_USAGE =
  `usage: boot_pair.ts BEFORE.img AFTER.img [pairs] [--client machinectl.yaml]
  [--memory footprint|page-out] [--label NAME]
  pairs: how many A B pairs (default 3)
  --client FILE  also call Version over mTLS with FILE's credentials (QEMU start → answer)
  --memory W     wait for the footprint line (containerd ready) or, with page-out, for
                 machined's first page-out (and the footprint line's figures if it came
                 first), and report their memory figures
  --label NAME   carried by every JSON line`;

/** Parses boot_pair's arguments; a usage error is `{ error }`. Pure. */
export function parseBootPairArgs(argv: readonly string[]): BootPairArgs | { error: string } {
  const split = splitArgs(argv);
  if ("error" in split) return split;
  const [before, after, pairsArg, extra] = split.positional;
  if (!before || !after || extra !== undefined) return { error: "two images and a count at most" };
  const pairs = Number(pairsArg ?? 3);
  if (!Number.isInteger(pairs) || pairs < 1) return { error: `pairs "${pairsArg}" is not >= 1` };
  const { client, memory, label } = split.options;
  if (memory !== undefined && memory !== "footprint" && memory !== "page-out") {
    return { error: `--memory "${memory}" is neither footprint nor page-out` };
  }
  return { before, after, pairs, client, memory, label };
}

const OPTIONS = ["client", "memory", "label"] as const;

/** Positional arguments and `--name value` / `--name=value` options (the last one wins). */
function splitArgs(
  argv: readonly string[],
): { positional: string[]; options: Partial<Record<typeof OPTIONS[number], string>> } | {
  error: string;
} {
  const positional: string[] = [];
  const options: Partial<Record<typeof OPTIONS[number], string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq) as typeof OPTIONS[number];
    if (!OPTIONS.includes(name)) return { error: `Unknown option "--${name}"` };
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) return { error: `Option "--${name}" needs a value` };
    options[name] = value;
  }
  return { positional, options };
}
