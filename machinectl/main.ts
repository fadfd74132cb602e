/**
 * machinectl: the CLI that operates machined nodes over their mutual-TLS API.
 * Run as `deno task machinectl ...`.
 *
 * @module
 */
import { runMachinectl } from "./cli.ts";

if (import.meta.main) {
  Deno.exit(await runMachinectl(Deno.args));
}
