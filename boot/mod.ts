/**
 * PID 1's boot: {@link runNode} boots a node (early mounts, the sequencer's phases, the
 * API, the controllers) and keeps it until the shutdown sequence ends in reboot(2).
 * main.ts is its one importer.
 *
 * @example
 * ```ts
 * import { runNode } from "./boot/mod.ts";
 * Deno.exit(await runNode());
 * ```
 * @module
 */
export { bootNode, runNode, type RunNodeDeps } from "./node_main.ts";
export {
  type PowerAction,
  SHUTDOWN_DEADLINES_MS,
  type ShutdownDeps,
  shutdownNode,
  type ShutdownStep,
} from "./shutdown.ts";
