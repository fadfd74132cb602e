/** The shape of a machinectl command and its flag declarations. */
import type { Io } from "./io.ts";

/** A flag a command accepts (node:util parseArgs style). */
export interface FlagSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  description: string;
  default?: string | boolean;
}

/** Parsed flags and positionals. */
export interface Invocation {
  // deno-lint-ignore no-explicit-any
  flags: Record<string, any>;
  args: string[];
  io: Io;
  /** Ends a following command as Ctrl-C does (for callers that embed machinectl, and tests). */
  signal?: AbortSignal;
}

/** One (sub)command. */
export interface Command {
  /** e.g. `get` or `gen config`. */
  name: string;
  /** Other names it answers to, e.g. `services` for `service`. */
  aliases?: readonly string[];
  usage: string;
  summary: string;
  flags: Record<string, FlagSpec>;
  /** Whether the global connection flags apply. */
  connects: boolean;
  run(inv: Invocation): Promise<number>;
}

/** Flags of every command that talks to a node. */
export const CONNECTION_FLAGS: Record<string, FlagSpec> = {
  config: { type: "string", description: "client config file" },
  context: { type: "string", description: "context to use instead of the current one" },
  endpoints: {
    type: "string",
    short: "e",
    multiple: true,
    description: "endpoint HOST[:PORT] overriding the context's",
  },
  nodes: {
    type: "string",
    short: "n",
    multiple: true,
    description: "run on these nodes (a,b,c; each dialed directly), concurrently; NODE column",
  },
  parallel: {
    type: "string",
    description: "with -n: how many nodes at once (default 8)",
  },
  insecure: {
    type: "boolean",
    description: "a node in maintenance mode: no client certificate (with one -e)",
  },
  fingerprint: {
    type: "string",
    description: "with --insecure: the SHA256:… fingerprint the node printed, pinned",
  },
};
