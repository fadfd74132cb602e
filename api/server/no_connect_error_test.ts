/**
 * Keeps errors.ts the one place that maps errors to Connect codes: no
 * production file may construct a ConnectError, except the two documented in
 * errors.ts (the fake CRI server plays a foreign server; machinectl is a client).
 */
import { deepEqual } from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname!, "..", "..");
const SKIPPED_DIRS = new Set([
  ".git",
  ".state",
  ".cache",
  "build",
  "node_modules",
  "api/gen",
  "cri/gen",
  "native-ops/target",
]);
const ALLOWED = ["api/server/errors.ts", "cri/fake_cri_server.ts", "machinectl/"];

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    const rel = relative(ROOT, path);
    if (e.isDirectory && !SKIPPED_DIRS.has(rel)) yield* sources(path);
    if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield rel;
  }
}

Deno.test("no production file outside errors.ts constructs a ConnectError", async () => {
  const found: string[] = [];
  for await (const rel of sources(ROOT)) {
    if (ALLOWED.some((a) => rel === a || (a.endsWith("/") && rel.startsWith(a)))) continue;
    const text = await Deno.readTextFile(join(ROOT, rel));
    if (/new\s+ConnectError\s*\(/.test(text)) found.push(rel);
  }
  deepEqual(found, [], "map a typed error (api/errors) in api/server/errors.ts instead");
});
