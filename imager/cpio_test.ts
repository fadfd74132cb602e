import assert from "node:assert/strict";
import { type CpioEntry, CpioError, readCpio, writeCpio } from "./cpio.ts";

async function archive(entries: CpioEntry[], mtime = 0): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const n = await writeCpio(entries, (c) => {
    chunks.push(c.slice());
    return Promise.resolve();
  }, mtime);
  const out = new Uint8Array(n);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

const sample = (): CpioEntry[] => [
  { type: "file", path: "/usr/bin/tool", mode: 0o755, data: new TextEncoder().encode("abcde") },
  { type: "symlink", path: "/lib", target: "usr/lib" },
  { type: "dir", path: "/usr/bin" },
  { type: "dir", path: "/usr" },
  { type: "dir", path: "/" },
  { type: "chardev", path: "/dev/console", major: 5, minor: 1 },
  { type: "dir", path: "/dev" },
];

Deno.test("writeCpio round-trips through readCpio, sorted, root-owned, fixed mtime", async () => {
  const bytes = await archive(sample(), 42);
  assert.equal(bytes.length % 512, 0);
  const members = readCpio(bytes);
  assert.deepEqual(members.map((m) => m.path), [
    ".",
    "dev",
    "dev/console",
    "lib",
    "usr",
    "usr/bin",
    "usr/bin/tool",
  ]);
  for (const m of members) {
    assert.equal(m.uid, 0);
    assert.equal(m.gid, 0);
    assert.equal(m.mtime, 42);
  }
  const tool = members.find((m) => m.path === "usr/bin/tool")!;
  assert.equal(tool.mode, 0o100755);
  assert.equal(new TextDecoder().decode(tool.data), "abcde");
  const lib = members.find((m) => m.path === "lib")!;
  assert.equal(lib.mode & 0o170000, 0o120000);
  assert.equal(new TextDecoder().decode(lib.data), "usr/lib");
  const con = members.find((m) => m.path === "dev/console")!;
  assert.deepEqual([con.mode & 0o170000, con.rdevMajor, con.rdevMinor], [0o020000, 5, 1]);
});

Deno.test("writeCpio is deterministic regardless of input order", async () => {
  const a = await archive(sample());
  const b = await archive(sample().reverse());
  assert.deepEqual(a, b);
});

Deno.test("writeCpio reads file bytes from a host source path", async () => {
  const src = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(src, "from host");
    const members = readCpio(await archive([{ type: "file", path: "/x", source: src }]));
    assert.equal(new TextDecoder().decode(members[0].data), "from host");
  } finally {
    await Deno.remove(src);
  }
});

Deno.test("writeCpio rejects duplicate paths", async () => {
  await assert.rejects(
    archive([{ type: "dir", path: "/a" }, { type: "dir", path: "a/" }]),
    (e) => e instanceof CpioError && e.path === "a",
  );
});

const HAVE_CPIO = (() => {
  try {
    return Deno.statSync("/usr/bin/cpio").isFile;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "the system cpio tool lists what writeCpio wrote (needs Debian's cpio)",
  ignore: !HAVE_CPIO,
}, async () => {
  const bin = "/usr/bin/cpio";
  const cmd = new Deno.Command(bin, { args: ["-t", "--quiet"], stdin: "piped", stdout: "piped" });
  const child = cmd.spawn();
  const w = child.stdin.getWriter();
  await w.write(await archive(sample()));
  await w.close();
  const out = await child.output();
  assert.equal(out.code, 0);
  assert.match(new TextDecoder().decode(out.stdout), /usr\/bin\/tool/);
});

Deno.test("writeCpio keeps an entry's owner (a directory apid writes)", async () => {
  const members = readCpio(
    await archive([
      { type: "dir", path: "/var/cache/deno-apid", uid: 50000, gid: 50000 },
      { type: "file", path: "/var/cache/deno-apid/db", data: new Uint8Array(1), uid: 50000 },
      { type: "file", path: "/etc/x", data: new Uint8Array(1) },
    ]),
  );
  const owner = (p: string) => members.filter((m) => m.path === p).map((m) => [m.uid, m.gid])[0];
  assert.deepEqual(owner("var/cache/deno-apid"), [50000, 50000]);
  assert.deepEqual(owner("var/cache/deno-apid/db"), [50000, 0]);
  assert.deepEqual(owner("etc/x"), [0, 0]);
});
