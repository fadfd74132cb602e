/**
 * The composition root of a running machined: which controllers and components a node runs
 * over which backends (native, or dev mode's read-only and fake set), the volume hooks, the
 * node actions the API calls and the test hook that holds the node unready. Only the
 * programs that start a node (boot/, dev/) and harnesses import it; the core every domain
 * is handed lives below, in core/.
 *
 * @example
 * ```ts
 * import { createNodeDomains, devBackends } from "./node/mod.ts";
 * import { Machined } from "./core/mod.ts";
 * declare const options: Parameters<typeof createNodeDomains>[2];
 * const machined = new Machined({ mode: "dev", pid1: false });
 * const domains = createNodeDomains(machined, devBackends(), options);
 * machined.register(domains.controllers);
 * ```
 * @module
 */
export { devBackends, nativeBackends, type NodeBackends } from "./backends.ts";
export { createNodeDomains, type DomainPaths, NODE_PATHS, type NodeDomains } from "./domains.ts";
export { nodeActions, type PowerRequest } from "./node_actions.ts";
export { unlockAction } from "./unlock_action.ts";
export { UNREADY_CONDITION, UNREADY_WORD, unreadyReason } from "./test_unready.ts";
export { followVolumes, VOLUME_HOOK_BACKOFF, type VolumeHookDeps } from "./volume_hooks.ts";
export { MALLOC_TRIM_SCHEDULE, startMallocTrim, trimOnce } from "./malloc_trim.ts";
