/**
 * Reset with server-side consent: the per-boot challenge, the coordinator
 * answering the Reset RPC, and the node's reset sequence (see docs/api.md,
 * docs/block.md).
 *
 * @example
 * ```ts
 * import { nodeReset } from "./reset/mod.ts";
 * declare const deps: import("./reset/mod.ts").NodeResetDeps;
 * const reset = nodeReset(deps);
 * const preview = await reset.coordinator.request(
 *   { challenge: "", mode: "graceful", powerOff: false },
 *   { name: "admin", role: "os:admin" },
 * );
 * ```
 * @module
 */
export { ChallengeError, type ChallengeRefusal, ResetChallenger } from "./challenge.ts";
export {
  ResetCoordinator,
  type ResetCoordinatorDeps,
  type ResetPlan,
} from "./reset_coordinator.ts";
export {
  killCgroupTree,
  type NodeReset,
  nodeReset,
  type NodeResetDeps,
  RESET_GRACEFUL_DEADLINE_MS,
} from "./node_reset.ts";
export type { ResetSequence } from "./reset_sequence.ts";
