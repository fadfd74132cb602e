/**
 * Test support for other rooms' tests (install, reset): fake disks and partitions built
 * the way discovery reports them, with predictable GUIDs. Other rooms' tests import these
 * from here, not from fake_disks.ts (tools/structure/surfaces.ts).
 * @module
 */
export { diskFacts, part, sequentialGuids } from "./fake_disks.ts";
