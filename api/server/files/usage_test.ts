import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { type ApiFixture, startApiFixture } from "../../testing.ts";
import type { MachineClient } from "../../client/mod.ts";
import { FILE_BOUNDS } from "./budgets.ts";

async function usage(c: MachineClient, path: string, depth = 0) {
  const out = [];
  for await (const m of c.api.diskUsage({ path, depth })) out.push(m);
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return e instanceof ConnectError ? e.code : (e as Error).message;
  }
}

async function withFixture(fn: (f: ApiFixture) => Promise<void>, bounds = FILE_BOUNDS) {
  const f = await startApiFixture({ fileBounds: bounds });
  try {
    await fn(f);
  } finally {
    await f.close();
  }
}

Deno.test("DiskUsage: totals per directory to the depth, deepest first, the path last", async () => {
  await withFixture(async (f) => {
    await Deno.mkdir(join(f.fileRoot, "var/log/sub/deeper"), { recursive: true });
    await Deno.writeFile(
      join(f.fileRoot, "var/log/sub/big.bin"),
      new Uint8Array(64 * 1024).fill(1),
    );
    const c = f.client(f.pki.clients["os:reader"]);
    const rows = await usage(c, "/var/log", 1);
    deepEqual(rows.map((r) => r.path), ["/var/log/sub", "/var/log"]);
    const [sub, top] = rows;
    ok(sub.size >= 64n * 1024n, String(sub.size));
    ok(top.size >= sub.size);
    equal(sub.entries, 3n); // sub, deeper, big.bin
    equal(top.entries, 7n); // + /var/log, two logs, the symlink
    ok(!top.truncated);
    deepEqual((await usage(c, "/var/log", 2)).map((r) => r.path), [
      "/var/log/sub/deeper",
      "/var/log/sub",
      "/var/log",
    ]);
    equal(await codeOf(usage(c, "/etc")), 7);
    equal(await codeOf(usage(f.client(f.pki.clients["os:operator"]), "/etc")), "ok");
  });
});

Deno.test("DiskUsage: the entry budget stops the count; the total says truncated", async () => {
  await withFixture(async (f) => {
    const c = f.client(f.pki.clients["os:reader"]);
    const rows = await usage(c, "/var/log");
    equal(rows.length, 1);
    equal(rows[0].entries, 3n);
    ok(rows[0].truncated);
  }, { ...FILE_BOUNDS, listMaxEntries: 3 });
});
