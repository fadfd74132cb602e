/**
 * machined's entry point. As PID 1 it boots the node; `dev` runs it
 * unprivileged on a laptop. The network-facing API process is machined-edge,
 * a separate Rust binary (native-ops/edge) that machined supervises.
 *
 * @module
 */
// First, so its top-level code is the first the bundle evaluates (start_line.ts).
import { printStartLine } from "./start_line.ts";
import { parseArgs } from "node:util";
import { runNode } from "./boot/mod.ts";
import { runDevMode } from "./dev/mod.ts";

/** machined's usage (stdout on `--help`, stderr after a usage error). */
export const USAGE = "usage: main.ts dev [--state DIR] [--listen HOST:PORT] [--hostname NAME]\n" +
  "       main.ts node   (what PID 1 runs)\n" +
  "       main.ts --help";

/** What a command line asks of machined (outside PID 1, which always boots the node). */
export type MainRequest =
  | { kind: "node" }
  | { kind: "dev"; state: string; listen: string; hostname: string }
  | { kind: "help" }
  | { kind: "error"; message: string };

/**
 * Parse machined's arguments without doing anything, so `--help` and a bad
 * flag are answered before dev mode starts a node. Pure.
 */
export function parseMain(args: readonly string[]): MainRequest {
  const [command, ...rest] = args;
  if (command === "node") return { kind: "node" };
  if (command === "--help" || command === "-h" || command === "help") return { kind: "help" };
  if (command !== "dev") {
    return { kind: "error", message: command ? `unknown command "${command}"` : "no command" };
  }
  if (rest.includes("--help") || rest.includes("-h")) return { kind: "help" };
  try {
    const { values } = parseArgs({
      args: [...rest],
      options: {
        state: { type: "string", default: ".state/dev" },
        listen: { type: "string", default: "127.0.0.1:50000" },
        hostname: { type: "string", default: "machined-dev" },
      },
      strict: true,
    });
    return { kind: "dev", state: values.state, listen: values.listen, hostname: values.hostname };
  } catch (e) {
    return { kind: "error", message: (e as Error).message };
  }
}

/** Dispatches on the first argument; PID 1 always boots the node (the kernel passes its args). */
export async function main(args: readonly string[]): Promise<number> {
  if (Deno.pid === 1) {
    printStartLine("main"); // every module is evaluated: the end of that phase
    return await runNode();
  }
  const r = parseMain(args);
  switch (r.kind) {
    case "node":
      return await runNode();
    case "dev":
      return await runDevMode({ stateDir: r.state, listen: r.listen, hostname: r.hostname });
    case "help":
      console.log(USAGE);
      return 0;
    case "error":
      console.error(`error: ${r.message}\n${USAGE}`);
      return 2;
  }
}

if (import.meta.main) {
  const code = await main(Deno.args);
  // PID 1 never exits (a dead PID 1 is a kernel panic); runNode does not return.
  if (Deno.pid !== 1) Deno.exit(code);
}
