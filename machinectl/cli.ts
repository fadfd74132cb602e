/**
 * machinectl's dispatcher: finds the command (one or two words), parses its
 * flags strictly, runs it, and turns any failure into one line and an exit code.
 */
import { parseArgs } from "node:util";
import { type Command, CONNECTION_FLAGS } from "./command.ts";
import { applyConfigCommand } from "./commands/apply_config.ts";
import { dashboardCommand } from "./dashboard/mod.ts";
import { configAddCommand, configContextsCommand, configUseCommand } from "./commands/config.ts";
import { dmesgCommand } from "./commands/dmesg.ts";
import { eventsCommand } from "./commands/events.ts";
import { genClientCommand, genConfigCommand } from "./commands/gen.ts";
import { genSigningKeyCommand } from "./commands/gen_signing_key.ts";
import { getCommand } from "./commands/get.ts";
import { logsCommand } from "./commands/logs.ts";
import { rebootCommand, shutdownCommand } from "./commands/power.ts";
import { resetCommand } from "./commands/reset.ts";
import { rollbackCommand, upgradeCommand } from "./commands/upgrade.ts";
import {
  serviceCommand,
  serviceRestartCommand,
  serviceStartCommand,
  serviceStopCommand,
} from "./commands/service.ts";
import { validateCommand } from "./commands/validate.ts";
import { versionCommand } from "./commands/version.ts";
import { memoryCommand } from "./commands/memory.ts";
import { processesCommand } from "./commands/processes.ts";
import { mountsCommand } from "./commands/mounts.ts";
import { statsCommand } from "./commands/stats.ts";
import { cgroupsCommand } from "./commands/cgroups.ts";
import { timeCommand } from "./commands/time.ts";
import { netstatCommand } from "./commands/netstat.ts";
import { containersCommand, imagesCommand } from "./commands/containers.ts";
import { inspectDependenciesCommand } from "./commands/inspect.ts";
import { supportCommand } from "./commands/support.ts";
import { listCommand, readCommand, usageCommand } from "./commands/files.ts";
import { healthCommand } from "./commands/health.ts";
import { copyCommand } from "./commands/copy.ts";
import { disksCommand } from "./commands/disks.ts";
import { completionCommand } from "./completion.ts";
import { suggest } from "../config/mod.ts";
import { classifyFailure, isTransportFailure } from "./failure_classification.ts";
import { probeFromFlags } from "./connection_probe.ts";
import { diagnoseFromFlags } from "./certificate_diagnosis.ts";
import type { ConnectionFlags } from "./connection.ts";
import { type FanOutFlags, fanOutNodes, fanOutOptions } from "./fanout_flags.ts";
import { runFanOut } from "./fanout.ts";
import { CliError, consoleIo, type Io } from "./io.ts";
import { errorForDisplay } from "./error_text.ts";
import { escapingIo } from "./terminal_text.ts";

/** Every command, in help order. */
export const COMMANDS: readonly Command[] = [
  versionCommand,
  getCommand,
  serviceCommand,
  serviceStartCommand,
  serviceStopCommand,
  serviceRestartCommand,
  logsCommand,
  dmesgCommand,
  eventsCommand,
  memoryCommand,
  processesCommand,
  mountsCommand,
  statsCommand,
  cgroupsCommand,
  timeCommand,
  netstatCommand,
  listCommand,
  readCommand,
  usageCommand,
  copyCommand,
  healthCommand,
  disksCommand,
  dashboardCommand,
  rebootCommand,
  shutdownCommand,
  resetCommand,
  upgradeCommand,
  rollbackCommand,
  applyConfigCommand,
  // observability: containers, support, dependencies
  containersCommand,
  imagesCommand,
  inspectDependenciesCommand,
  supportCommand,
  validateCommand,
  genConfigCommand,
  genClientCommand,
  genSigningKeyCommand,
  configContextsCommand,
  configUseCommand,
  configAddCommand,
  completionCommand(() => COMMANDS),
];

/** Options of {@link runMachinectl}. */
export interface RunOptions {
  /** Ends a following command (`logs -f`, `dmesg -f`, `events`, `get -w`) as Ctrl-C does. */
  signal?: AbortSignal;
}

/** Runs machinectl with `argv` (without the program name); returns the exit code. */
export async function runMachinectl(
  argv: readonly string[],
  io: Io = consoleIo,
  options: RunOptions = {},
): Promise<number> {
  // Every command writes through this: node data never reaches the terminal raw.
  io = escapingIo(io);
  // Global flags may come before the command: `machinectl --config X get ms`.
  const { command, rest, words } = findCommand(argv);
  if (!command) return noCommand(argv, words, io);
  const unknown = unknownFlag(rest, command);
  if (unknown !== undefined) {
    io.err(`${command.name}: ${unknown}\nusage: machinectl ${command.usage}`);
    return 2;
  }
  let parsed;
  const booleans = booleanValues(rest, command);
  try {
    parsed = parseArgs({
      args: booleans.args,
      options: { ...command.flags, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    io.err(`${command.name}: ${(e as Error).message}\nusage: machinectl ${command.usage}`);
    return 2;
  }
  if (parsed.values.help) {
    io.out(
      `usage: machinectl ${command.usage}\n\n${command.summary}\n\nflags:\n${flagHelp(command)}`,
    );
    return 0;
  }
  try {
    const values = parsed.values as FanOutFlags;
    const nodes = command.connects ? await fanOutNodes(values) : undefined;
    if (nodes) {
      return await runFanOut(
        command,
        { flags: parsed.values, args: parsed.positionals, io, signal: options.signal },
        nodes,
        fanOutOptions(values, command.name),
      );
    }
    return await command.run({
      flags: { ...parsed.values, ...booleans.set },
      args: parsed.positionals,
      io,
      signal: options.signal,
    });
  } catch (e) {
    const flags = parsed.values as ConnectionFlags;
    const refusal = e instanceof CliError ? undefined : await diagnoseFromFlags(flags);
    // A transport failure is retried step by step to name its real cause.
    const probe = command.connects && isTransportFailure(e)
      ? await probeFromFlags(flags)
      : undefined;
    io.err(
      `error: ${
        errorForDisplay(e, (x) =>
          classifyFailure({ error: x, endpoint: endpointHint(parsed.values), refusal, probe }))
      }`,
    );
    return e instanceof CliError ? e.exitCode : 1;
  }
}

/**
 * No command matched: top-level help when none was named (`--help`, `help`),
 * else an error naming the unknown word with a did-you-mean, whatever flags
 * follow it (`machinectl upgrade --help` is an error, not help).
 */
function noCommand(argv: readonly string[], words: readonly string[], io: Io): number {
  const globals: Command = {
    name: "machinectl",
    usage: "",
    summary: "",
    connects: false,
    flags: { ...CONNECTION_FLAGS, help: { type: "boolean", short: "h", description: "" } },
    run: () => Promise.resolve(0),
  };
  const unknown = words.length === 0 ? unknownFlag(argv, globals) : undefined;
  if (unknown !== undefined) {
    io.err(`machinectl: ${unknown}\nrun \`machinectl --help\` for the commands and global flags`);
    return 2;
  }
  if (words.length === 0 || words[0] === "help") {
    io.out(help());
    const asked = words[0] === "help" || argv.includes("--help") || argv.includes("-h");
    return asked ? 0 : 2;
  }
  const names = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
  const near = suggest(words[0], names.map((n) => n.split(" ")[0])) ??
    suggest(words.slice(0, 2).join(" "), names);
  const hint = near ? `; did you mean "${near}"?` : "";
  io.err(`unknown command "${words[0]}"${hint}\n${help()}`);
  return 2;
}

function findCommand(
  argv: readonly string[],
): { command?: Command; rest: string[]; words: string[] } {
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i];
    if (a.startsWith("-")) {
      // Skip a global flag's value (`--config FILE`).
      if (
        !a.includes("=") &&
        [
          "--config",
          "--context",
          "-e",
          "--endpoints",
          "-n",
          "--nodes",
          "--fingerprint",
          "--parallel",
        ].includes(a)
      ) i++;
      continue;
    }
    words.push(i);
  }
  const two = words.length === 2 ? `${argv[words[0]]} ${argv[words[1]]}` : undefined;
  const byTwo = two ? COMMANDS.find((c) => named(c, two)) : undefined;
  const wordList = words.map((i) => argv[i]);
  if (byTwo) {
    return {
      command: byTwo,
      rest: argv.filter((_, i) => i !== words[0] && i !== words[1]),
      words: wordList,
    };
  }
  const one = words.length > 0 ? argv[words[0]] : undefined;
  const byOne = one === undefined ? undefined : COMMANDS.find((c) => named(c, one));
  if (byOne) {
    return { command: byOne, rest: argv.filter((_, i) => i !== words[0]), words: wordList };
  }
  return { rest: [...argv], words: wordList };
}

function named(c: Command, name: string): boolean {
  return c.name === name || (c.aliases?.includes(name) ?? false);
}

function endpointHint(values: Record<string, unknown>): string | undefined {
  const e = values.endpoints as string[] | undefined;
  return e?.[0];
}

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "machinectl: operate a machined node over its mutual-TLS API",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "global flags: --config FILE, --context NAME, -e HOST[:PORT], -n NODE[,NODE...], --insecure",
    "client config: --config, then $MACHINECTL_CONFIG, then $XDG_CONFIG_HOME/machinectl/config.yaml,",
    "  then ~/.config/machinectl/config.yaml",
    "run `machinectl COMMAND --help` for a command's flags",
  ].join("\n");
}

function flagHelp(command: Command): string {
  return Object.entries(command.flags)
    .map(([name, f]) =>
      `  ${f.short ? `-${f.short}, ` : "    "}--${name}${f.type === "string" ? " VALUE" : ""}` +
      `  ${f.description}${f.default !== undefined ? ` (default ${f.default})` : ""}`
    )
    .join("\n");
}

/**
 * `--flag=false` / `--flag=true` for a boolean flag (parseArgs takes no value
 * for booleans): returns the arguments without them and what they set, so
 * `reset --wait=false` works. Pure.
 */
export function booleanValues(
  args: readonly string[],
  command: Command,
): { args: string[]; set: Record<string, boolean> } {
  const out: string[] = [];
  const set: Record<string, boolean> = {};
  for (const a of args) {
    const m = /^--([\w-]+)=(true|false)$/.exec(a);
    if (m && command.flags[m[1]]?.type === "boolean") set[m[1]] = m[2] === "true";
    else out.push(a);
  }
  return { args: out, set };
}

/**
 * The first flag in `args` that `command` does not declare (or a value-less
 * string flag), as a one-line message with a did-you-mean; undefined when
 * every flag is known. Checked before anything runs. Pure.
 */
export function unknownFlag(args: readonly string[], command: Command): string | undefined {
  const flags: Record<string, { type: string; short?: string }> = {
    ...command.flags,
    help: { type: "boolean", short: "h" },
  };
  const shorts = new Map(
    Object.entries(flags).filter(([, f]) => f.short).map(([n, f]) => [f.short!, n]),
  );
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return undefined;
    if (!a.startsWith("-") || a === "-") continue;
    let name: string | undefined;
    let inline = false;
    if (a.startsWith("--")) {
      name = a.slice(2).split("=")[0];
      inline = a.includes("=");
      if (!(name in flags)) {
        const near = suggest(name, Object.keys(flags));
        return `unknown flag "--${name}"` + (near ? `; did you mean "--${near}"?` : "");
      }
    } else {
      name = shorts.get(a[1]);
      if (name === undefined) return `unknown flag "-${a[1]}"`;
      inline = a.length > 2;
    }
    if (flags[name].type === "string" && !inline) {
      if (i + 1 >= args.length) return `flag "${a}" needs a value`;
      i++;
    }
  }
  return undefined;
}
