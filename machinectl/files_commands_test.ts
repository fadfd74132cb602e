/** machinectl list and read against the real edge and machined-side server (a seeded node root). */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startApiFixture } from "../api/testing.ts";
import { SEEDED_CA_KEY, SEEDED_ENV_VALUE } from "../api/server/files/testing.ts";
import { clientConfig, runCli as run } from "./testing.ts";
import { readTarGz } from "./support/tar.ts";

Deno.test("machinectl list and read: a reader sees logs and redacted STATE, nothing else", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    let r = await run(reader, "list", "/var/log");
    equal(r.code, 0, r.err);
    match(r.out.split("\n")[0], /^MODE\s+KIND\s+SIZE\s+MODIFIED\s+PATH$/);
    match(r.out, /file\s+7 B\s+\S+\s+\/var\/log\/machined\.log/);
    match(r.out, /symlink .*\/var\/log\/etc-link -> /);
    r = await run(reader, "read", "/var/log/machined.log");
    equal(r.code, 0, r.err);
    equal(r.out, "booted");
    r = await run(reader, "read", "/system/state/config.yaml");
    equal(r.code, 0, r.err);
    ok(!r.out.includes(SEEDED_CA_KEY) && !r.out.includes(SEEDED_ENV_VALUE), r.out);
    match(r.err, /were redacted by the node/);
    r = await run(reader, "read", "/etc/hostname");
    equal(r.code, 1);
    match(r.err, /may list and read only under \/var\/log, \/system\/state/);
    r = await run(reader, "ls", "/var/log/../../etc");
    equal(r.code, 1);
    match(r.err, /must not contain "\." or "\.\." segments/);
    r = await run(reader, "du", "--depth", "1", "/var/log");
    equal(r.code, 0, r.err);
    match(r.out.split("\n")[0], /^SIZE\s+ENTRIES\s+PATH$/);
    match(r.out.split("\n").at(-1)!, /\s4\s+\/var\/log$/);
    r = await run(reader, "usage", "/etc");
    equal(r.code, 1);
    const tgz = join(f.fileRoot, "..", "state.tar.gz");
    r = await run(reader, "cp", "/system/state", tgz);
    equal(r.code, 0, r.err);
    match(r.err, /left out state\/blob\.bin: .*no redaction rule/);
    const names = (await readTarGz(await Deno.readFile(tgz))).map((e) => e.name).sort();
    equal(names.join(","), "state/config.yaml,state/pki/node.key");
    const admin = await clientConfig(f, "os:admin");
    r = await run(admin, "cat", "/etc/hostname");
    equal(r.out, "node-1");
  } finally {
    await f.close();
  }
});

Deno.test("machinectl list and read escape the node's path names and contents", async () => {
  const f = await startApiFixture();
  try {
    await Deno.writeTextFile(join(f.fileRoot, "var/log/\x1b[31mred.log"), "a\x1b]0;title\x07b\n");
    const reader = await clientConfig(f, "os:reader");
    let r = await run(reader, "list", "/var/log");
    equal(r.code, 0, r.err);
    ok(!r.out.includes("\x1b"), JSON.stringify(r.out));
    match(r.out, /\\x1b\[31mred\.log/);
    r = await run(reader, "read", "/var/log/\x1b[31mred.log");
    ok(!r.out.includes("\x1b") && !r.out.includes("\x07"), JSON.stringify(r.out));
    const out = join(f.fileRoot, "..", "copy.log");
    r = await run(reader, "read", "--out", out, "/var/log/\x1b[31mred.log");
    equal(r.code, 0, r.err);
    equal(await Deno.readTextFile(out), "a\x1b]0;title\x07b\n");
    equal((await Deno.stat(out)).mode! & 0o777, 0o600);
  } finally {
    await f.close();
  }
});

Deno.test("machinectl copy keeps modes of files and directories, never setuid or setgid", async () => {
  const f = await startApiFixture();
  try {
    const log = join(f.fileRoot, "var/log");
    await Deno.mkdir(join(log, "app"));
    await Deno.writeTextFile(join(log, "app/a.log"), "a\n");
    await Deno.writeFile(join(log, "app/empty.log"), new Uint8Array());
    await Deno.chmod(join(log, "app"), 0o2750);
    await Deno.chmod(join(log, "app/a.log"), 0o4755);
    await Deno.chmod(join(log, "app/empty.log"), 0o600);
    await Deno.chmod(join(log, "machined.log"), 0o640);
    const tgz = join(f.fileRoot, "..", "log.tar.gz");
    const r = await run(await clientConfig(f, "os:admin"), "cp", "/var/log", tgz);
    equal(r.code, 0, r.err);
    match(r.out, /: 4 files$/);
    const entries = await readTarGz(await Deno.readFile(tgz), { directories: true });
    const modes = Object.fromEntries(entries.map((e) => [e.name, [e.directory ?? false, e.mode]]));
    const mode = async (p: string) => (await Deno.stat(join(log, p))).mode! & 0o1777;
    equal(
      JSON.stringify(modes),
      JSON.stringify({
        "log": [true, await mode(".")],
        "log/app": [true, 0o750],
        "log/app/a.log": [false, 0o755],
        "log/app/empty.log": [false, 0o600],
        "log/containerd.log": [false, await mode("containerd.log")],
        "log/machined.log": [false, 0o640],
      }),
    );
  } finally {
    await f.close();
  }
});
