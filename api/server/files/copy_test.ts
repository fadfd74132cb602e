import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startApiFixture } from "../../testing.ts";
import type { MachineClient } from "../../client/mod.ts";
import { FILE_BOUNDS, type FileBounds } from "./budgets.ts";
import { SEEDED_CA_KEY, SEEDED_PEM_BODY } from "./testing.ts";

async function copy(c: MachineClient, path: string) {
  const files = new Map<string, string>();
  const modes: Record<string, number> = {};
  const dirs: string[] = [];
  const skipped: Record<string, string> = {};
  let truncated = false;
  for await (const m of c.api.fileCopy({ path })) {
    if (m.skipped) skipped[m.name] = m.skipped;
    else if (m.truncated) truncated = true;
    else if (m.directory) dirs.push(m.name);
    else files.set(m.name, (files.get(m.name) ?? "") + new TextDecoder().decode(m.data));
    if (!m.skipped && !m.truncated) modes[m.name] = m.mode;
  }
  return { files: Object.fromEntries(files), dirs, modes, skipped, truncated };
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
    deepEqual(got.dirs, ["log"]);
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

Deno.test("FileCopy: directories and files carry their modes (setuid and setgid as they are); an empty file is sent", async () => {
  const f = await startApiFixture();
  try {
    const log = join(f.fileRoot, "var/log");
    await Deno.mkdir(join(log, "app"));
    await Deno.writeFile(join(log, "app/empty.log"), new Uint8Array());
    await Deno.chmod(join(log, "app/empty.log"), 0o640);
    await Deno.chmod(join(log, "app"), 0o2750);
    await Deno.chmod(join(log, "machined.log"), 0o4640);
    await Deno.chmod(join(log, "containerd.log"), 0o600);
    const got = await copy(f.client(f.pki.clients["os:admin"]), "/var/log");
    deepEqual(got.dirs, ["log", "log/app"]);
    equal(got.files["log/app/empty.log"], "");
    equal(got.modes["log/app"], 0o2750);
    equal(got.modes["log/app/empty.log"], 0o640);
    equal(got.modes["log/machined.log"], 0o4640);
    equal(got.modes["log/containerd.log"], 0o600);
    equal(got.modes["log"], (await Deno.stat(log)).mode! & 0o7777);
  } finally {
    await f.close();
  }
});
