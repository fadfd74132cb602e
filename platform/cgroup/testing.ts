/**
 * Test support for other rooms' root tests (the supervisor's): a scratch cgroup subtree
 * to run services in and remove afterwards. Imported from here, not from scratch_root.ts
 * (tools/structure/surfaces.ts).
 * @module
 */
export { scratchCgroupRoot } from "./scratch_root.ts";
