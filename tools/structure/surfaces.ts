/**
 * Each room's public surface: the files another room may import. A room is entered through
 * its `mod.ts`; test code may also use another room's test support. An import that reaches
 * past the surface into a room's other files is a bypass: it couples the importer to the
 * room's inner layout, so moving a file inside the room breaks rooms that never asked for it.
 *
 * The rule, per importer:
 * - production code imports another room only through that room's `mod.ts`;
 * - test code (`*_test.ts`, shared suites `*_suite.ts`, test support: `testing.ts`,
 *   `testing_*.ts`, `testdata/`, and the harness rooms bench/ and e2e/) may also import
 *   another room's test support, never its other internals. A test imports its own room's
 *   internals freely. A room's fakes and helpers that other rooms' tests need are re-exported
 *   from its `testing.ts`.
 */
import type { Edge, ImportGraph } from "./graph.ts";
import { isTest } from "./graph.ts";
import { roomOf } from "./rooms.ts";

/** Harness rooms whose every file is test code (they import test support of other rooms). */
export const HARNESSES = ["bench", "e2e"];

/**
 * Imports that may pass a room's surface, each with the reason; the structure test pins
 * the list, so a new bypass is either fixed or written here with its reason.
 * Keyed `importer -> imported`.
 */
export const ALLOWED_BYPASSES: Record<string, string> = {
  "imager/arch/target_inputs.ts -> native-ops/build.ts":
    "the image build runs the addon's and the edge's build script; native-ops/mod.ts is the " +
    "run-time door to the addon and must not load the build tooling (cargo, cross sysroots)",
  "platform/power/power_in_pidns.ts -> platform/testing.ts":
    "the inner half of platform/power's root test, run as PID 1 of a fresh PID namespace: " +
    "test code by role, though not by name, and it refuses to run in the host's namespace",
};

/** Whether `file` is test support another room's tests may import: a `testing.ts`/`testing_*.ts` module or under `testdata/`. */
export function isSharedTestSupport(file: string): boolean {
  return /(^|\/)testing(_\w+)?\.ts$/.test(file) || /(^|\/)testdata\//.test(file);
}

/** Whether `file` is test code: a test, test support, or a file of a harness room. */
export function isTestCode(file: string): boolean {
  return isTest(file) || /_suite\.ts$/.test(file) || isSharedTestSupport(file) ||
    HARNESSES.includes(roomOf(file));
}

/** Whether `file` is `room`'s entry: `<room>/mod.ts`, or main.ts for the root files. */
export function isEntry(file: string, room: string): boolean {
  return room === "main" ? file === "main.ts" : file === `${room}/mod.ts`;
}

/** The imports that pass another room's surface, in graph order. */
export function bypassesOf(graph: ImportGraph): Edge[] {
  return graph.edges.filter((e) => {
    const from = roomOf(e.from), to = roomOf(e.to);
    if (from === to || isEntry(e.to, to)) return false;
    if (isTestCode(e.from) && isSharedTestSupport(e.to)) return false;
    return !(`${e.from} -> ${e.to}` in ALLOWED_BYPASSES);
  });
}
