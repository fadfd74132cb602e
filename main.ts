/**
 * machined's entry point. As PID 1 it boots the node; `dev` runs it
 * unprivileged on a laptop. The network-facing API process is machined-edge,
 * a separate Rust binary (native-ops/edge) that machined supervises.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runNode } from "./boot/node_main.ts";
import { runDevMode } from "./dev/dev_mode.ts";

const USAGE = "usage: main.ts dev [--state DIR] [--listen HOST:PORT] [--hostname NAME]\n" +
  "       main.ts node   (what PID 1 runs)";

/** Dispatches on the first argument; PID 1 always boots the node. */
export async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  if (Deno.pid === 1 || command === "node") return await runNode();
  switch (command) {
    case "dev": {
      const { values } = parseArgs({
        args: rest,
        options: {
          state: { type: "string", default: ".state/dev" },
          listen: { type: "string", default: "127.0.0.1:50000" },
          hostname: { type: "string", default: "machined-dev" },
        },
        strict: true,
      });
      return await runDevMode({
        stateDir: values.state,
        listen: values.listen,
        hostname: values.hostname,
      });
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

if (import.meta.main) {
  const code = await main(Deno.args);
  // PID 1 never exits (a dead PID 1 is a kernel panic); runNode does not return.
  if (Deno.pid !== 1) Deno.exit(code);
}
