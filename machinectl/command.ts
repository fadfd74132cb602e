/**
 * The shape of a machinectl command. A command is written with
 * {@link defineCommand}: its flags are declared once (flags.ts) and its
 * handler receives them typed from that declaration; its usage line is
 * derived from them, as are `--help`, docs/cli.md and completion.
 *
 * @module
 */
import type { Io } from "./io.ts";
import {
  declareFlags,
  type FlagDecls,
  type FlagValues,
  type ParsedFlags,
  usageLine,
} from "./flags.ts";

/** Parsed flags and positionals; `F` is the flags' type (see {@link defineCommand}). */
export interface Invocation<F = FlagValues> {
  flags: F;
  args: string[];
  io: Io;
  /** Ends a following command as Ctrl-C does (for callers that embed machinectl, and tests). */
  signal?: AbortSignal;
}

/** One (sub)command, as the dispatcher, docs and completion see it. */
export interface Command {
  /** e.g. `get` or `gen config`. */
  readonly name: string;
  /** Other names it answers to, e.g. `services` for `service`. */
  readonly aliases?: readonly string[];
  /** The usage line after `machinectl `, derived from `args` and `flags`. */
  readonly usage: string;
  readonly summary: string;
  /** The command's own flags (the global connection flags are added when it `connects`). */
  readonly flags: FlagDecls;
  /** Whether the global connection flags apply. */
  readonly connects: boolean;
  /**
   * The command reads `-n` itself and runs once over every node (rotate-ca:
   * one new CA for the whole fleet); the dispatcher does not fan it out.
   */
  readonly fleet?: boolean;
  run(inv: Invocation): Promise<number>;
}

/** The global flags, declared once: every command that talks to a node takes them. */
export const CONNECTION_FLAGS = declareFlags({
  config: { kind: "string", value: "FILE", help: "client config file" },
  context: { kind: "string", value: "NAME", help: "context to use instead of the current one" },
  endpoints: {
    kind: "strings",
    short: "e",
    value: "HOST[:PORT]",
    help: "endpoint HOST[:PORT] overriding the context's",
  },
  nodes: {
    kind: "strings",
    short: "n",
    value: "NODE[,NODE...]",
    help: "run on these nodes (a,b,c; each dialed directly), concurrently; NODE column",
  },
  parallel: {
    kind: "string",
    value: "N",
    help: "with -n: how many nodes at once (default 8)",
  },
  insecure: {
    kind: "boolean",
    help: "a node in maintenance mode: no client certificate (with one -e)",
  },
  fingerprint: {
    kind: "string",
    value: "SHA256:…",
    help: "with --insecure: the SHA256:… fingerprint the node printed, pinned",
  },
});

/** The parsed global connection flags. */
export type ConnectionFlagValues = ParsedFlags<typeof CONNECTION_FLAGS>;

/** What a command's handler receives: its own flags, plus the global ones when it connects. */
export type CommandFlags<F extends FlagDecls, C extends boolean> =
  & ParsedFlags<F>
  & (C extends true ? ConnectionFlagValues : unknown);

/** A command as written: {@link Command} with positionals instead of a usage line. */
export interface CommandSpec<F extends FlagDecls, C extends boolean> {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** The positionals, e.g. `TYPE [ID]`; the usage line adds every flag after them. */
  readonly args?: string;
  readonly summary: string;
  readonly connects: C;
  /** See {@link Command.fleet}. */
  readonly fleet?: boolean;
  readonly flags: F;
  run(inv: Invocation<CommandFlags<F, C>>): Promise<number>;
}

/**
 * A command from its spec: the usage line derived from its positionals and
 * flags, its handler typed by its flags (reading an undeclared flag does not
 * compile).
 */
export function defineCommand<const F extends FlagDecls, const C extends boolean>(
  spec: CommandSpec<F, C>,
): Command {
  return {
    name: spec.name,
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    usage: usageLine(spec.name, spec.args, spec.flags),
    summary: spec.summary,
    flags: spec.flags,
    connects: spec.connects,
    ...(spec.fleet ? { fleet: true } : {}),
    // The dispatcher parses with `flags` (plus the global ones when `connects`),
    // so what it passes has exactly the shape CommandFlags<F, C> describes.
    run: (inv) => spec.run(inv as Invocation<CommandFlags<F, C>>),
  };
}

/** Every flag the dispatcher parses for `command`: its own, then the global ones. */
export function allFlags(command: Command): FlagDecls {
  return command.connects ? { ...command.flags, ...CONNECTION_FLAGS } : command.flags;
}
