import { deepEqual, equal, ok } from "node:assert/strict";
import { startApiFixture } from "../../testing.ts";
import type { MachineClient } from "../../client/mod.ts";
import { FILE_BOUNDS, type FileBounds } from "./budgets.ts";
import { SEEDED_CA_KEY, SEEDED_PEM_BODY } from "./testing.ts";

async function copy(c: MachineClient, path: string) {
  const files = new Map<string, string>();
  const skipped: Record<string, string> = {};
  let truncated = false;
  for await (const m of c.api.fileCopy({ path })) {
    if (m.skipped) skipped[m.name] = m.skipped;
    else if (m.truncated) truncated = true;
    else files.set(m.name, (files.get(m.name) ?? "") + new TextDecoder().decode(m.data));
  }
  return { files: Object.fromEntries(files), skipped, truncated };
}

async function withClient(
  role: "os:reader" | "os:admin",
  fn: (c: MachineClient) => Promise<void>,
  bounds?: FileBounds,
) {
  const f = await startApiFixture({ fileBounds: bounds });
  try {
    await fn(f.client(f.pki.clients[role]));
  } finally {
    await f.close();
  }
}

Deno.test("FileCopy: files named under the parent, symlinks skipped", async () => {
  await withClient("os:reader", async (c) => {
    const got = await copy(c, "/var/log");
    deepEqual(got.files, { "log/containerd.log": "ready\n", "log/machined.log": "booted\n" });
    deepEqual(got.skipped, { "log/etc-link": "a symlink" });
    equal(got.truncated, false);
  });
});

Deno.test("FileCopy of /system/state by a reader: redacted, and what no rule vouches for skipped", async () => {
  await withClient("os:reader", async (c) => {
    const got = await copy(c, "/system/state");
    const all = Object.values(got.files).join("");
    ok(!all.includes(SEEDED_CA_KEY) && !all.includes(SEEDED_PEM_BODY), all);
    equal(got.files["state/pki/node.key"], "(redacted)\n");
    ok(got.skipped["state/blob.bin"].includes("no redaction rule"), JSON.stringify(got.skipped));
  });
});

Deno.test("FileCopy: the copy budget stops before the file that crosses it", async () => {
  // containerd.log (6 bytes) fits in 10, machined.log (7 more) does not.
  await withClient("os:admin", async (c) => {
    const got = await copy(c, "/var/log");
    deepEqual(Object.keys(got.files), ["log/containerd.log"]);
    equal(got.truncated, true);
  }, { ...FILE_BOUNDS, copyMaxBytes: 10 });
});
