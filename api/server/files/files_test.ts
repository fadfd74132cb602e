import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import type { Role } from "../../../pki/mod.ts";
import { type ApiFixture, startApiFixture } from "../../testing.ts";
import type { MachineClient } from "../../client/mod.ts";
import { SEEDED_CA_KEY, SEEDED_ENV_VALUE, SEEDED_PEM_BODY } from "./testing.ts";
import { FILE_BOUNDS } from "./budgets.ts";

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return e instanceof ConnectError ? String(e.code) : (e as Error).message;
  }
}

async function read(c: MachineClient, path: string): Promise<{ text: string; redacted: boolean }> {
  let text = "";
  let redacted = false;
  const td = new TextDecoder();
  for await (const m of c.api.fileRead({ path })) {
    text += td.decode(m.data, { stream: true });
    redacted ||= m.redacted;
  }
  return { text, redacted };
}

async function list(c: MachineClient, path: string, depth = 0) {
  const out = [];
  for await (const m of c.api.fileList({ path, depth })) out.push(m);
  return out;
}

async function withFixture(fn: (f: ApiFixture) => Promise<void>, bounds = FILE_BOUNDS) {
  const f = await startApiFixture({ fileBounds: bounds });
  try {
    await fn(f);
  } finally {
    await f.close();
  }
}

const as = (f: ApiFixture, role: Role) => f.client(f.pki.clients[role]);

Deno.test("FileList: the path first, then entries sorted, with kind, size and link", async () => {
  await withFixture(async (f) => {
    const got = await list(as(f, "os:reader"), "/var/log");
    deepEqual(got.map((e) => [e.path, e.kind]), [
      ["/var/log", "dir"],
      ["/var/log/containerd.log", "file"],
      ["/var/log/etc-link", "symlink"],
      ["/var/log/machined.log", "file"],
    ]);
    equal(got[3].size, 7n);
    equal(got[2].link, join(f.fileRoot, "etc"));
    ok(got.every((e) => !e.truncated));
  });
});

Deno.test("FileRead: a reader reads logs; a symlink leading out of the root is refused", async () => {
  await withFixture(async (f) => {
    const c = as(f, "os:reader");
    deepEqual(await read(c, "/var/log/machined.log"), { text: "booted\n", redacted: false });
    equal(await codeOf(read(c, "/var/log/etc-link/hostname")), "7");
    equal(await codeOf(read(c, "/etc/hostname")), "7");
    equal(await codeOf(read(c, "/var/log/../../etc/hostname")), "3");
    equal(await codeOf(read(c, "/var/log/none")), "5");
    equal(await codeOf(read(c, "/var/log")), "9");
    // An admin may read /etc, but the symlink still leaves /var/log's root.
    const a = as(f, "os:admin");
    equal((await read(a, "/etc/hostname")).text, "node-1\n");
    equal(await codeOf(read(a, "/var/log/etc-link/hostname")), "7");
  });
});

Deno.test("FileRead: a FIFO is never opened (the call would hang)", async () => {
  await withFixture(async (f) => {
    const fifo = join(f.fileRoot, "var/log/pipe");
    const r = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    equal(r.code, 0);
    equal(await codeOf(read(as(f, "os:admin"), "/var/log/pipe")), "9");
    const entry = (await list(as(f, "os:reader"), "/var/log")).find((e) => e.path.endsWith("pipe"));
    equal(entry?.kind, "other");
  });
});

Deno.test("/system/state: the CA key redacted for all, env values and PEM keys for readers", async () => {
  await withFixture(async (f) => {
    const reader = await read(as(f, "os:reader"), "/system/state/config.yaml");
    ok(reader.redacted);
    ok(!reader.text.includes(SEEDED_CA_KEY) && !reader.text.includes(SEEDED_ENV_VALUE));
    ok(reader.text.includes("TOKEN: (redacted)") && reader.text.includes("hostname: n"));
    const admin = await read(as(f, "os:admin"), "/system/state/config.yaml");
    ok(!admin.text.includes(SEEDED_CA_KEY) && admin.text.includes(SEEDED_ENV_VALUE));
    for (const role of ["os:reader", "os:admin"] as const) {
      const key = await read(as(f, role), "/system/state/pki/node.key");
      deepEqual(key, { text: "(redacted)\n", redacted: true }, role);
      ok(!key.text.includes(SEEDED_PEM_BODY));
    }
    // No rule vouches for a binary file: refused to a reader, raw to an operator.
    equal(await codeOf(read(as(f, "os:reader"), "/system/state/blob.bin")), "7");
    equal((await read(as(f, "os:operator"), "/system/state/blob.bin")).text, "\0\x01binary");
  });
});

Deno.test("bounds: read budget exactly met passes, one byte over ends ResourceExhausted", async () => {
  const bounds = { ...FILE_BOUNDS, readMaxBytes: 7, chunkBytes: 3 };
  await withFixture(async (f) => {
    const c = as(f, "os:reader");
    equal((await read(c, "/var/log/machined.log")).text, "booted\n"); // 7 bytes: at the limit
    await Deno.writeTextFile(join(f.fileRoot, "var/log/big.log"), "12345678");
    let got = "";
    const err = await codeOf((async () => {
      for await (const m of c.api.fileRead({ path: "/var/log/big.log" })) {
        got += new TextDecoder().decode(m.data);
      }
    })());
    equal(err, "8");
    equal(got, "1234567");
  }, bounds);
});

Deno.test("bounds: entries stop at the budget (last says truncated); depth is capped", async () => {
  const bounds = { ...FILE_BOUNDS, listMaxEntries: 3, listMaxDepth: 1 };
  await withFixture(async (f) => {
    const c = as(f, "os:admin");
    const got = await list(c, "/var/log");
    equal(got.length, 3);
    deepEqual(got.map((e) => e.truncated), [false, false, true]);
    await Deno.mkdir(join(f.fileRoot, "system/a/b/c"), { recursive: true });
    const deep = await list(c, "/system/a", 99);
    deepEqual(deep.map((e) => e.path), ["/system/a", "/system/a/b", "/system/a/b/c"]);
  }, bounds);
});

Deno.test("bounds: the deadline ends a call DeadlineExceeded", async () => {
  const bounds = { ...FILE_BOUNDS, deadlineMs: 0 };
  await withFixture(async (f) => {
    equal(await codeOf(list(as(f, "os:admin"), "/var/log")), "4");
  }, bounds);
});
