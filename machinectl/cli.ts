/**
 * machinectl's dispatcher: finds the command (one or two words), parses its
 * flags strictly, runs it, and turns any failure into one line and an exit code.
 */
import { allFlags, type Command, CONNECTION_FLAGS } from "./command.ts";
import { FlagError, parseFlags, unknownFlag, valueFlagWords } from "./flag_parse.ts";
import { flagHelpLines, flagSynopsis, type FlagValues } from "./flags.ts";
import { applyConfigCommand } from "./commands/apply_config.ts";
import { patchCommand } from "./commands/patch.ts";
import { editCommand } from "./commands/edit.ts";
import { rotateCaCommand } from "./commands/rotate_ca.ts";
import { dashboardCommand } from "./dashboard/mod.ts";
import { configAddCommand, configContextsCommand, configUseCommand } from "./commands/config.ts";
import { dmesgCommand } from "./commands/dmesg.ts";
import { eventsCommand } from "./commands/events.ts";
import { genClientCommand, genConfigCommand } from "./commands/gen.ts";
import { genSigningKeyCommand } from "./commands/gen_signing_key.ts";
import { genSecureBootKeysCommand } from "./commands/gen_secureboot_keys.ts";
import { getCommand } from "./commands/get.ts";
import { logsCommand } from "./commands/logs.ts";
import { rebootCommand, shutdownCommand } from "./commands/power.ts";
import { resetCommand } from "./commands/reset.ts";
import { rollbackCommand, upgradeCommand } from "./commands/upgrade.ts";
import { unlockCommand } from "./commands/unlock.ts";
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
  unlockCommand,
  applyConfigCommand,
  patchCommand,
  editCommand,
  rotateCaCommand,
  // observability: containers, support, dependencies
  containersCommand,
  imagesCommand,
  inspectDependenciesCommand,
  supportCommand,
  validateCommand,
  genConfigCommand,
  genClientCommand,
  genSigningKeyCommand,
  genSecureBootKeysCommand,
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
  let parsed;
  try {
    parsed = parseFlags(rest, allFlags(command));
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.err(`${command.name}: ${e.message}\nusage: machinectl ${command.usage}`);
    return 2;
  }
  if (parsed.help) {
    io.out(commandHelp(command));
    return 0;
  }
  try {
    const inv = { flags: parsed.flags, args: parsed.args, io, signal: options.signal };
    const values = parsed.flags as FanOutFlags;
    const nodes = command.connects && !command.fleet ? await fanOutNodes(values) : undefined;
    if (nodes) return await runFanOut(command, inv, nodes, fanOutOptions(values, command.name));
    return await command.run(inv);
  } catch (e) {
    const flags = parsed.flags as ConnectionFlags;
    const refusal = e instanceof CliError ? undefined : await diagnoseFromFlags(flags);
    // A transport failure is retried step by step to name its real cause.
    const probe = command.connects && isTransportFailure(e)
      ? await probeFromFlags(flags)
      : undefined;
    io.err(
      `error: ${
        errorForDisplay(e, (x) =>
          classifyFailure({ error: x, endpoint: endpointHint(parsed.flags), refusal, probe }))
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
  const unknown = words.length === 0 ? unknownFlag(argv, CONNECTION_FLAGS) : undefined;
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

/** The global flags that take a value (`--config FILE`): their value is not a command word. */
const GLOBAL_VALUE_FLAGS = valueFlagWords(CONNECTION_FLAGS);

function findCommand(
  argv: readonly string[],
): { command?: Command; rest: string[]; words: string[] } {
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i];
    if (a.startsWith("-")) {
      // Skip a global flag's value (`--config FILE`).
      if (!a.includes("=") && GLOBAL_VALUE_FLAGS.includes(a)) i++;
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

function endpointHint(values: FlagValues): string | undefined {
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
    ...wrap(
      "global flags: " +
        Object.entries(CONNECTION_FLAGS).map(([n, f]) => flagSynopsis(n, f)).join(", "),
    ),
    "client config: --config, then $MACHINECTL_CONFIG, then $XDG_CONFIG_HOME/machinectl/config.yaml,",
    "  then ~/.config/machinectl/config.yaml",
    "run `machinectl COMMAND --help` for a command's flags",
  ].join("\n");
}

/** `text` cut at spaces into lines of at most `width`, the later ones indented by two. */
function wrap(text: string, width = 100): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = "  " + word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/** `--help` of a command: usage, summary, its flags, then the global ones if it connects. */
export function commandHelp(command: Command): string {
  const own = Object.keys(command.flags).length
    ? ["", "flags:", ...flagHelpLines(command.flags)]
    : [];
  const globals = command.connects ? ["", "global flags:", ...flagHelpLines(CONNECTION_FLAGS)] : [];
  return [`usage: machinectl ${command.usage}`, "", command.summary, ...own, ...globals].join("\n");
}
